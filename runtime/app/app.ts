/**
 * The application core: every operation a front-end offers, transport-neutral. `hermes run`, the daemon,
 * `hermes rpc` (a method table onto these), `hermes acp` and `hermes sessions` call them; they raise only the
 * domain errors of errors.ts and return plain values (results with the process's secrets replaced).
 *
 * Sessions opened here stay live until closed (`close`); a stored session is opened on first use.
 */
import type { Occupancy } from "../agent/seams.ts";
import type { ResolvedJob } from "../config/job.ts";
import type { WebhookTrigger } from "../config/job_schema.ts";
import { DEFAULT_CONTEXT_WINDOW } from "../providers/model.ts";
import type { RunResult } from "../session/outcome.ts";
import type { ServedSession } from "../session/served_session.ts";
import type { TurnOutcome } from "../session/turn.ts";
// Removing sessions and reading transcripts are imported on use: a run reaches the App without needing them.
import type { Transcript } from "../session_admin/transcript.ts";
import type { SearchHit, SearchOptions } from "../session_admin/search.ts";
import type { ExportOptions } from "../session_admin/export.ts";
import type { PruneOptions, PrunePlan } from "../session_admin/prune.ts";
import type {
  AdminStore,
  ArchiveResult,
  ListSessionsOptions,
  SessionStore,
  SessionSummary,
} from "../store/store.ts";
import type { StoredMessage } from "../core/types.ts";
import type { AppContext } from "./context.ts";
import type { StoredCompaction } from "./compact_stored.ts";
// Views of open sessions come from the hub (hub.ts), loaded with the first session opened here.
import type { OpenSession } from "./open_session.ts";
// Admitting stored jobs, resolving job references and the queue's records are imported by the operations
// that use them: `hermes run` hands the App a resolved job, and the path to its first request skips them.
import type { AdmitOptions } from "./stored_job.ts";
import type { Hooks } from "../core/hooks.ts";
import { ApprovalDecidedError, NotFoundError, TurnCancelledError, TurnRunningError } from "./errors.ts";
// The session core (hub.ts, run.ts) is imported on first use: `sessions delete` need not load an agent.
import type { SessionHub, SessionHubOptions } from "./hub.ts";
import type { JobRef, SessionJob, ValidateOptions, Validation } from "./jobs.ts";
import type { RunJobOptions } from "./run.ts";
import type { SubmitOptions } from "./queue.ts";
import type { ListRunsOptions, QueuedRun, RunDelivery, RunEventRow } from "../store/store.ts";
// tokens.ts loads node:crypto (~25 ms of Deno's Node layer): imported on first use, off the run path.
import type { TokenCheck } from "./tokens.ts";
import type { ApiToken, Approval, ApprovalStatus, CostGroup, CostQuery } from "../store/store.ts";
import type { ScheduleCache, ScheduleOptions, ScheduleReport } from "./schedules.ts";

export type { AppContext } from "./context.ts";
export type { JobRef, SessionJob, ValidateOptions, Validation } from "./jobs.ts";

export interface OpenParams extends SessionJob {
  /** Overrides the model name. */
  model?: string;
}

export interface SessionView extends Transcript {
  /** Open in this process. */
  live: boolean;
  /** A turn is running or queued here. */
  busy: boolean;
  /** How full its context is (null: a stored session without a stored job). */
  occupancy: Occupancy | null;
}

/** What one `run` needs beyond the app's context; `job` is resolved already or a reference to resolve. */
export type RunOptions =
  & Omit<RunJobOptions, "job" | "store" | "clock" | "env" | "host" | "events" | "log">
  & { job: ResolvedJob | JobRef; events?: AppContext["events"]; log?: AppContext["log"] };

export class App {
  readonly context: AppContext;
  #hubOptions: SessionHubOptions;
  /** The sessions open here; none until the first is opened. */
  #opened: SessionHub | undefined;
  /** Scheduled job files as last loaded (`schedules`), so a page looking again reparses only edited files. */
  #scheduleCache: ScheduleCache = new Map();

  constructor(context: AppContext, options: SessionHubOptions = {}) {
    this.context = context;
    this.#hubOptions = options;
  }

  async #hub(): Promise<SessionHub> {
    if (this.#opened) return this.#opened;
    const { SessionHub } = await import("./hub.ts");
    return this.#opened ??= new SessionHub(this.context, this.#hubOptions);
  }

  /** Opens a new session: a job file or object, or config.yaml's defaults. */
  async open(params: OpenParams): Promise<OpenSession> {
    const { sessionJob } = await import("./jobs.ts");
    const job = await sessionJob(params, this.#jobScope());
    const hub = await this.#hub();
    return hub.view(await hub.create(job, params.model !== undefined ? { model: params.model } : {}));
  }

  /** A session open here, or the stored session `ref` (id, prefix, `latest`) opened now. */
  async load(ref: string): Promise<OpenSession> {
    const served = await this.#served(ref);
    return this.#opened!.view(served);
  }

  /** The sessions open here. */
  sessions(): OpenSession[] {
    const hub = this.#opened;
    return hub ? hub.list().map((served) => hub.view(served)) : [];
  }

  /** The session with this (resolved) id, if it is open here. */
  find(id: string): OpenSession | undefined {
    const served = this.#opened?.find(id);
    return served ? this.#opened!.view(served) : undefined;
  }

  async #served(ref: string): Promise<ServedSession> {
    return await (await this.#hub()).open(ref);
  }

  /** Queues a prompt behind the session's other prompts; the outcome carries the result. */
  async prompt(ref: string, text: string): Promise<TurnOutcome> {
    return await (await this.#served(ref)).prompt(text);
  }

  /** Runs a slash command now (not behind queued prompts). */
  async command(ref: string, text: string): Promise<TurnOutcome> {
    return await (await this.#served(ref)).command(text.trim());
  }

  /** Stops the session's running turn and every queued one; how many were stopped. */
  async cancel(ref: string): Promise<{ session_id: string; cancelled: number }> {
    const id = await this.context.store.resolveSessionId(ref);
    return { session_id: id, cancelled: this.#opened?.find(id)?.cancel() ?? 0 };
  }

  /** A stored session's transcript (`--all`: compacted rows too), as stored: secrets replaced. */
  async transcript(ref: string, options: { all?: boolean } = {}): Promise<Transcript> {
    const { store } = this.context;
    const [id] = await store.resolveSessionIds([ref], { action: "show session" });
    const { readTranscript } = await import("../session_admin/transcript.ts");
    return await readTranscript(store, id!, options.all ? { all: true } : {});
  }

  /** Full-text search over every stored message (stored text holds no secret). */
  async search(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const { searchMessages } = await import("../session_admin/search.ts");
    return await searchMessages(this.context.store, query, options);
  }

  /** Every row of a session, compacted ones included, as stored: the resolved id and the text in chunks. */
  async export(ref: string, options: ExportOptions): Promise<{ id: string; chunks: AsyncIterable<string> }> {
    const { store } = this.context;
    const [id] = await store.resolveSessionIds([ref], { action: "export session" });
    const { exportSession } = await import("../session_admin/export.ts");
    return { id: id!, chunks: exportSession(store, id!, options) };
  }

  /**
   * Deletes the sessions not updated for `olderThanMs` (a dry run only plans); `on_session_delete` reaches
   * the app's hooks once.
   */
  async prune(options: PruneOptions): Promise<PrunePlan> {
    const { pruneSessions } = await import("../session_admin/prune.ts");
    const { hooks } = this.context;
    return await pruneSessions(this.context.store, { ...(hooks ? { hooks } : {}), ...options });
  }

  /** The active messages of a session, in order (as stored: secrets replaced), for a client to replay. */
  async history(ref: string): Promise<StoredMessage[]> {
    const { store } = this.context;
    return await store.activeMessages(await store.resolveSessionId(ref));
  }

  /** A session's transcript (as stored: secrets replaced), whether it is open here, and how full its context is. */
  async get(ref: string, options: { all?: boolean } = {}): Promise<SessionView> {
    const { store } = this.context;
    const id = await store.resolveSessionId(ref);
    const live = this.#opened?.find(id);
    const { readTranscript } = await import("../session_admin/transcript.ts");
    const transcript = await readTranscript(store, id, options.all ? { all: true } : {});
    const occupancy = live ? await live.live.compactor.occupancy(id) : await storedOccupancy(store, id);
    return { ...transcript, live: live !== undefined, busy: live?.busy ?? false, occupancy };
  }

  /** Stored sessions, each marked when it is open here. */
  async list(filter: ListSessionsOptions = {}): Promise<(SessionSummary & { live: boolean })[]> {
    const open = new Set((this.#opened?.list() ?? []).map((s) => s.id));
    return (await this.context.store.listSessions(filter)).map((s) => ({ ...s, live: open.has(s.id) }));
  }

  /** Deletes sessions, all or none (`on_session_delete` once); sessions open here are closed first. */
  async delete(refs: readonly string[], options: { force?: boolean } = {}): Promise<string[]> {
    const ids = await this.#closeIdle(refs, "delete");
    const { deleteSessions } = await import("../session_admin/remove.ts");
    return await deleteSessions(this.context.store, ids, { ...this.#hooks(), ...options });
  }

  /** Archives sessions, all or none; sessions open here are closed first. */
  async archive(refs: readonly string[], options: { force?: boolean } = {}): Promise<ArchiveResult> {
    const ids = await this.#closeIdle(refs, "archive");
    const { archiveSessions } = await import("../session_admin/remove.ts");
    return await archiveSessions(this.context.store, ids, { ...this.#hooks(), ...options });
  }

  /** A forced compaction (`/compress`) of a session, opened here if it is not. */
  async compact(ref: string, options: { focus?: string } = {}) {
    const { live } = await this.#served(ref);
    const outcome = await live.compactor.compact(live.id, options);
    return { session_id: live.id, ...outcome };
  }

  /**
   * A forced compaction of a stored session without opening it (`hermes sessions compact`); `hooks` hear
   * `post_compaction` (the CLI gives config.yaml's plugins and the stored job's own).
   */
  /** A stored session's job, held to the trust policy in force now (stored_job.ts). */
  async storedJob(ref: string, options: AdmitOptions = {}): Promise<ResolvedJob> {
    const { admittedStoredJob } = await import("./stored_job.ts");
    return await admittedStoredJob(this.context, ref, options);
  }

  async compactStored(id: string, options: { hooks: Hooks; focus?: string }): Promise<StoredCompaction> {
    // It calls the job's model: held to the policy in force now, as a resume is.
    const { admittedStoredJob } = await import("./stored_job.ts");
    const job = await admittedStoredJob(this.context, id);
    const { compactStored } = await import("./compact_stored.ts");
    const { hooks, ...rest } = options;
    return await compactStored(this.context, { id, job, hooks }, rest);
  }

  /** Validates a job file or object without running it. */
  async validate(
    ref: { path: string } | { job: Record<string, unknown> },
    options: ValidateOptions = {},
  ): Promise<Validation> {
    const { signal } = this.context;
    const { validateJob } = await import("./jobs.ts");
    return await validateJob(ref, this.context, { ...(signal ? { signal } : {}), ...options });
  }

  /** Runs a job to its result (a fresh session, or `resume`), as `hermes run` does. */
  async run(options: RunOptions): Promise<RunResult> {
    const { store, clock, env, host, signal } = this.context;
    const { job, events, log, ...rest } = options;
    const resolved = "spec" in job
      ? job as ResolvedJob
      : await (await import("./jobs.ts")).resolveJobRef(job, this.#jobScope());
    const { runJob } = await import("./run.ts");
    const result = await runJob({
      store,
      clock,
      env,
      host,
      source: this.context.source,
      ...(this.context.providers ? { providers: this.context.providers } : {}),
      ...(signal ? { signal } : {}),
      ...(this.context.home ? { worktrees: `${this.context.home}/worktrees` } : {}),
      ...rest,
      job: resolved,
      events: events ?? this.context.events,
      log: log ?? this.context.log,
    });
    // The result left the session through its outlet (runtime/session/outlets.ts), secrets replaced.
    return result;
  }

  /**
   * Validates a job exactly as `run` does (a bad job is a ValidationError; nothing is queued) and queues
   * it; returns at once. The same `key` returns the run it first submitted (`deduplicated`).
   */
  async submit(
    params: (JobRef | { job: ResolvedJob }) & SubmitOptions,
  ): Promise<{ run: QueuedRun; deduplicated: boolean }> {
    const { job, inputs: _inputs, cwd: _cwd, ...options } = params as JobRef & SubmitOptions;
    const resolved = typeof job === "object" && job !== null && "spec" in job
      ? job as unknown as ResolvedJob
      : await (await import("./jobs.ts")).resolveJobRef(params as JobRef, this.#jobScope());
    const { queuedRunOf } = await import("./queue.ts");
    const run = queuedRunOf(resolved, { ...options, now: this.context.clock.now() });
    const submitted = await this.context.store.submitRun(run);
    if (!submitted.deduplicated) this.context.onSubmitted?.(submitted.run);
    return submitted;
  }

  /**
   * The webhook trigger of the job file at `path` (loaded without inputs, as `validate` does) and its secret,
   * read from this process's environment (never the job's env:); undefined when the job has no trigger.
   */
  async webhook(path: string): Promise<WebhookOf | undefined> {
    const { loadJob } = await import("../config/job_file.ts");
    const { config, env } = this.context;
    // Read before the delivery is authenticated: without the trust policy, which judges the job when it is
    // submitted (after the signature), so an unsigned caller learns nothing of the policy.
    const { policies: _policies, ...unjudged } = config ?? {};
    const job = loadJob(path, { validateOnly: true, ...(config ? { config: unjudged } : {}) });
    const trigger = job.spec.triggers?.webhook;
    if (trigger === undefined) return undefined;
    return { job: job.spec.name, trigger, secret: env[trigger.secret_env] };
  }

  /** Queued runs, newest first. */
  async runs(filter: ListRunsOptions = {}): Promise<QueuedRun[]> {
    return await this.context.store.listRuns(filter);
  }

  /** The queued run `ref` names (an id or a unique prefix). */
  async getRun(ref: string): Promise<QueuedRun> {
    const { store } = this.context;
    return (await store.getRun(await store.resolveRunId(ref)))!;
  }

  /** Cancels a queued run, or asks its worker to stop a running one; resolves with the run as it is now. */
  async cancelRun(ref: string): Promise<QueuedRun> {
    const { store, clock } = this.context;
    return await store.cancelRun(await store.resolveRunId(ref), clock.now());
  }

  /** The run once it ended (polling every `pollMs`, woken early by the store's notifications). */
  async waitRun(ref: string, options: { signal?: AbortSignal; pollMs?: number } = {}): Promise<QueuedRun> {
    const { store, clock } = this.context;
    const id = await store.resolveRunId(ref);
    const { hasEnded } = await import("./queue.ts");
    let wake = new AbortController();
    const stop = await store.watchRuns((changed) => {
      if (changed === id) wake.abort();
    });
    try {
      for (;;) {
        const run = (await store.getRun(id))!;
        if (hasEnded(run)) return run;
        options.signal?.throwIfAborted();
        const signals = [wake.signal, ...(options.signal ? [options.signal] : [])];
        await clock.sleep(options.pollMs ?? 200, AbortSignal.any(signals)).catch(() => {});
        if (wake.signal.aborted) wake = new AbortController();
      }
    } finally {
      await stop();
    }
  }

  /** Model calls, tokens and cost the store recorded, one group per model (`hermes cost --by model`). */
  async spendByModel(): Promise<CostGroup[]> {
    return await this.context.store.costReport({ by: ["model"] });
  }

  /**
   * Model calls, tokens and cost the store recorded in a time range, grouped as asked (`hermes cost`): read
   * by the model-call rows' time index, no transcript.
   */
  async cost(query: CostQuery): Promise<CostGroup[]> {
    return await this.context.store.costReport(query);
  }

  /**
   * The scheduled jobs under `paths` with their next slots (the daemon's cron computation) and latest slot
   * records; a file that is not a valid scheduled job is named in `problems`, the others still shown.
   */
  async schedules(options: ScheduleOptions): Promise<ScheduleReport> {
    // Imported on first use: it loads croner and the daemon's job loader, which no run needs.
    const { scheduleReport } = await import("./schedules.ts");
    return await scheduleReport(this.context.store, options, this.context.clock.now(), this.#scheduleCache);
  }

  /** How many runs the store holds in each status. */
  async runCounts(): Promise<Record<string, number>> {
    return await this.context.store.runCounts();
  }

  /** The run's completion notifications (its `notify:` deliveries), oldest first. */
  async runDeliveries(ref: string): Promise<RunDelivery[]> {
    const { store } = this.context;
    return await store.runDeliveries(await store.resolveRunId(ref));
  }

  /**
   * Whether the store tells this process of other processes' writes (PostgreSQL): then a waiter looks at it
   * seldom, woken by `watchRunChanges`; otherwise (a SQLite file) it must look often.
   */
  get storeNotifies(): boolean {
    return this.context.store.notifies;
  }

  /**
   * Calls `wake` with a run's id whenever any process appended events of it, or submitted, cancelled or
   * ended it (never, on a store without notifications); resolves with a function that stops listening.
   */
  async watchRunChanges(wake: (runId: string) => void): Promise<() => Promise<void>> {
    const { store } = this.context;
    const stops = await Promise.all([store.watchRunEvents(wake), store.watchRuns(wake)]);
    return async () => {
      await Promise.all(stops.map((stop) => stop()));
    };
  }

  /** The run's stored events after `afterSeq`. */
  async runEvents(ref: string, afterSeq = 0): Promise<RunEventRow[]> {
    const { store } = this.context;
    return await store.runEvents(await store.resolveRunId(ref), afterSeq);
  }

  /**
   * Approvals parked by runs with `approval: {api: true}`, oldest first; `pending` (the default) leaves out
   * those whose time is up.
   */
  async approvals(
    filter: { status?: ApprovalStatus | "all"; run_id?: string; limit?: number } = {},
  ): Promise<Approval[]> {
    const status = filter.status ?? "pending";
    return await this.context.store.listApprovals({
      ...(status !== "all" ? { status } : {}),
      ...(filter.run_id !== undefined ? { run_id: filter.run_id } : {}),
      ...(filter.limit !== undefined ? { limit: filter.limit } : {}),
      now: this.context.clock.now(),
    });
  }

  /** One approval by id; a NotFoundError when the store has none. */
  async approval(id: string): Promise<Approval> {
    const approval = await this.context.store.getApproval(id);
    if (!approval) throw new NotFoundError(`Cannot find approval ${id}: no such approval`);
    return approval;
  }

  /**
   * Decides a pending approval (the run waiting for it continues, wherever it runs); an approval decided
   * already, or whose time is up, is an ApprovalDecidedError: only the first decision counts.
   */
  async decideApproval(
    id: string,
    decision: { decision: "allow" | "deny"; reason?: string; by: string | null },
  ): Promise<Approval> {
    const { store, clock } = this.context;
    const now = clock.now();
    const current = await this.approval(id);
    if (current.status === "pending" && current.expires_at <= now) {
      throw new ApprovalDecidedError(id, "expired");
    }
    const outcome = await store.decideApproval({
      id,
      status: decision.decision === "allow" ? "allowed" : "denied",
      reason: decision.reason ?? null,
      by: decision.by,
      now,
    });
    if (!outcome) throw new NotFoundError(`Cannot find approval ${id}: no such approval`);
    if (!outcome.decided) throw new ApprovalDecidedError(id, outcome.approval.status);
    return outcome.approval;
  }

  /** A new API token; `token` is the only copy of its secret (the store keeps its hash). */
  async createToken(
    options: { scopes: readonly string[]; name?: string; expires_at?: number },
  ): Promise<{ token: string; info: ApiToken }> {
    const { createToken } = await import("./tokens.ts");
    return await createToken(this.context.store, { ...options, now: this.context.clock.now() });
  }

  /** Every API token (never a secret), oldest first. */
  async tokens(): Promise<ApiToken[]> {
    return await this.context.store.listTokens();
  }

  /** Revokes a token by id; a NotFoundError when the store has none. */
  async revokeToken(id: string): Promise<ApiToken> {
    const token = await this.context.store.revokeToken(id, this.context.clock.now());
    if (!token) throw new NotFoundError(`Cannot revoke token ${id}: no such token`);
    return token;
  }

  /**
   * The random secret (hex, 256 bits) every server sharing this store holds under `name`, made by the
   * first that asks: what such servers sign with stays valid on each of them and across restarts.
   */
  async serverSecret(name: string): Promise<string> {
    const { hex } = await import("../core/hmac.ts");
    const fresh = hex(crypto.getRandomValues(new Uint8Array(32)));
    return await this.context.store.serverSecret(name, fresh, this.context.clock.now());
  }

  /** Whether a presented bearer token is live (read from the store each time). */
  async authenticate(presented: string): Promise<TokenCheck> {
    const { checkToken } = await import("./tokens.ts");
    return await checkToken(this.context.store, presented, this.context.clock.now());
  }

  /** Closes every session open here (each finishes in the store). */
  close(): Promise<void> {
    return this.#opened?.closeAll() ?? Promise.resolve();
  }

  #jobScope() {
    const { env, config, cwd, source, providers } = this.context;
    return { env, config, cwd, name: source, providers };
  }

  #hooks() {
    return this.context.hooks ? { hooks: this.context.hooks } : {};
  }

  /** Closes the sessions open here before a store-level change; refuses while a turn runs. */
  async #closeIdle(refs: readonly string[], action: "delete" | "archive"): Promise<readonly string[]> {
    if ((this.#opened?.list() ?? []).length === 0) return refs; // nothing open here: the store resolves them
    const ids = await this.context.store.resolveSessionIds(refs, {
      action: `${action} sessions`,
      mutating: true,
    });
    for (const id of ids) if (this.#opened?.find(id)?.busy) throw new TurnRunningError(action, id);
    for (const id of ids) await this.#opened?.close(id);
    return ids;
  }
}

/** The result of a turn, for a front-end that answers a cancelled turn as a failure (JSON-RPC). */
export function resultOf(outcome: TurnOutcome): RunResult {
  if (outcome.cancelled) throw new TurnCancelledError(outcome.result);
  return outcome.result;
}

/** How full a stored session is against its own job's window and compaction settings (null: no stored job). */
async function storedOccupancy(store: AdminStore & SessionStore, id: string): Promise<Occupancy | null> {
  const { storedJob } = await import("../session/stored_job.ts");
  const job = await storedJob(store, id).catch(() => undefined);
  if (!job) return null;
  const { sessionOccupancy } = await import("../compaction/mod.ts");
  return await sessionOccupancy(store, id, {
    context_window: job.spec.model?.context_window ?? DEFAULT_CONTEXT_WINDOW,
    ...(job.spec.model?.max_output_tokens === undefined
      ? {}
      : { max_output_tokens: job.spec.model.max_output_tokens }),
    ...(job.spec.compaction ? { compaction: job.spec.compaction } : {}),
  });
}

/** A job's webhook trigger and the secret its deliveries are signed with (undefined: the variable is unset). */
export interface WebhookOf {
  job: string;
  trigger: WebhookTrigger;
  secret: string | undefined;
}
