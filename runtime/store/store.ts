/**
 * The session store as an interface of domain operations (docs/store.md). Each operation is atomic inside and
 * returns a Promise, so that an embedded database (SQLite, runtime/store/sqlite/) and a network one implement
 * the same contract (tests/contracts/store.ts). Callers never compose transactions or write SQL.
 * Times are epoch milliseconds; `now` in a request is the caller's clock.
 */
import type { ProcessIdentity } from "../core/process_identity.ts";
import type { Overlap } from "./rules.ts";
import type { Labels } from "../core/labels.ts";
import type {
  Message,
  MessageKind,
  Role,
  SessionRow,
  SessionStatus,
  StoredMessage,
  ToolCall,
} from "../core/types.ts";

export { newApprovalId, newSessionId } from "./ids.ts";

// ---- sessions ----

/** What some model calls add to a session's totals (absent counts add nothing). */
export interface UsageDelta {
  turns: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
  /** USD; null: the calls were of a model without a known price (counted in `unpriced_calls`). */
  cost_usd?: number | null;
  /** Who answered (`openai`, `anthropic`, …) and which model: recorded with the call for `hermes cost`. */
  provider?: string | null;
  model?: string | null;
}

export interface NewSession {
  job: string;
  job_path?: string | null;
  config_json?: string;
  model?: string | null;
  parent_id?: string | null;
  status?: SessionStatus;
  id?: string;
  /** Stored with the session and copied onto each of its model calls, for `hermes cost --by label:KEY`. */
  labels?: Labels;
  /** The process that runs it, written with the row: a kill between creating and owning leaves no orphan. */
  owner?: { host: string; pid: number; started: string };
}

/** Columns a caller may change; `updated_at` is set by the store. */
export type SessionPatch = Partial<Omit<SessionRow, "id" | "created_at" | "updated_at">>;

/** Who owns a session row now (a run, a daemon loop); null columns when nobody does. */
export interface SessionOwner {
  owner_host: string | null;
  owner_pid: number | null;
  owner_started: string | null;
}

export interface ResolveOptions {
  /** What the caller was about to do, for the error message: "delete sessions", "show session". */
  action: string;
  /** The operation changes the store: say that nothing was changed. */
  mutating?: boolean;
}

export interface SessionOps {
  createSession(input: NewSession): Promise<SessionRow>;
  getSession(id: string): Promise<SessionRow | undefined>;
  /** An id, a unique id prefix, or `latest` (newest unarchived); rejects with NotFoundError naming it. */
  resolveSessionId(ref: string): Promise<string>;
  /**
   * Every reference resolved, or a NotFoundError naming each unknown or ambiguous one. Duplicates are
   * returned once, in first-mention order.
   */
  resolveSessionIds(refs: readonly string[], options: ResolveOptions): Promise<string[]>;
  updateSession(id: string, patch: SessionPatch): Promise<void>;
  /**
   * Adds one model call, its token counts and its cost to
   * the session's totals and records it as a model-call row, in one transaction: its time, provider, model,
   * tokens and cost, attributed to the session's root (a session with a `parent_id` rolls up into its
   * parent's, and so on up) with the root's job and labels, for {@linkcode Store.jobSpend} and
   * {@linkcode Store.costReport}. Model-call rows are kept when sessions are deleted: money spent stays spent.
   */
  addUsage(id: string, usage: UsageDelta): Promise<void>;
  /** What the model calls of a job's sessions cost (USD) from `since` (epoch ms) on, summed. */
  jobSpend(job: string, since: number): Promise<number>;
  /** Makes `holder` the owner unless the owner is no longer `expected` (compare-and-set; one process wins). */
  adoptSession(id: string, change: { expected: SessionOwner; holder: ProcessIdentity }): Promise<boolean>;
  /**
   * One turn at a time per session across processes: one compare-and-set on the owner, whatever the
   * session's status. `holder` becomes the owner when nobody owns the session (a run clears its owner when
   * it ends), when it owns it already, or when the owner is provably dead on this host. Of any number of
   * processes claiming at once, one wins; the others are told who holds it.
   */
  claimSession(id: string, holder: ProcessIdentity): Promise<SessionClaim>;
  /**
   * The owner is healthy: until `expiresAt` no other process may claim the session on the grounds that it
   * stalled (after it, one may, however alive the owner's pid). False when `holder` no longer owns it.
   */
  renewOwner(id: string, holder: ProcessIdentity, expiresAt: number): Promise<boolean>;
}

export type SessionClaim = { claimed: true } | { claimed: false; owner: ProcessIdentity };

// ---- messages ----

export interface AppendMessage extends Message {
  kind?: MessageKind;
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  /**
   * false stores the row archived (not in the active transcript, still shown by `sessions show --all`): the
   * full text of a tool result that is cut at insertion, appended just before its cut copy. Default true.
   */
  active?: boolean;
}

/** An active row without its content (its size only): what compaction plans and estimates with. */
export interface TranscriptRow {
  id: number;
  seq: number;
  pos: number;
  role: Role;
  kind: MessageKind;
  /** Characters of the content. */
  chars: number;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

/** What the compaction estimate needs, read without visiting every active row. */
export interface EstimateInput {
  /**
   * The newest active assistant row with real `prompt_tokens`; null when there is none or a compaction row
   * (kind ≠ message) was stored after it, since it then measured a transcript that no longer exists.
   */
  reading: TranscriptRow | null;
  /** The active rows stored after the reading (by seq); every active row when `reading` is null. */
  after: TranscriptRow[];
}

/** Where a row stands in prompt order: by `pos`, then `seq`. */
export interface MessageKey {
  pos: number;
  seq: number;
}

export interface MessageOps {
  /** Appends in one transaction, after everything already in the session (seq = max + 1, …). */
  appendMessages(sessionId: string, messages: readonly AppendMessage[]): Promise<StoredMessage[]>;
  /** The transcript the model sees, in prompt order. */
  activeMessages(sessionId: string): Promise<StoredMessage[]>;
  /** Every row including those replaced by compaction, in prompt order. */
  allMessages(sessionId: string): Promise<StoredMessage[]>;
  /**
   * Up to `limit` of the rows `allMessages` returns, those after the row at `after` (null: from the first),
   * so a reader of a long session holds one page at a time.
   */
  messagePage(sessionId: string, after: MessageKey | null, limit: number): Promise<StoredMessage[]>;
  /** How many rows the session has, those replaced by compaction included. */
  messageCount(sessionId: string): Promise<number>;
  /** The UTF-8 bytes of the session's tool results as stored, archived copies included. */
  toolOutputBytes(sessionId: string): Promise<number>;
  /** A cheap fingerprint of the active transcript: `count:maxId` of its rows. */
  transcriptVersion(sessionId: string): Promise<string>;
  /** The active rows without content, in prompt order. */
  transcriptRows(sessionId: string): Promise<TranscriptRow[]>;
  /** Content of the rows `ids`, each cut to its first `cap` characters (null: whole). */
  messageContents(ids: readonly number[], cap: number | null): Promise<Map<number, string>>;
  estimateInput(sessionId: string): Promise<EstimateInput>;
}

// ---- steps: what a run sends, once (a resume after any number of kills sends no step twice) ----

/**
 * One step of a session (a run's prompt or one of its steps), numbered from 1 across the session's runs.
 * `attempt` counts the runs that started it; `message_seq` is the seq of the user row that sent it (null
 * until it is sent, and for a slash command, which is run again instead).
 */
export interface StepRecord {
  session_id: string;
  step: number;
  input: string;
  attempt: number;
  message_seq: number | null;
  status: "started" | "done";
  started_at: number;
  updated_at: number;
}

export interface StepOps {
  /**
   * Starts step `step` (attempt 1) or starts it again (attempt + 1) in one transaction; a done step is
   * returned unchanged. Resolves with the record as it is now.
   */
  startStep(sessionId: string, step: { step: number; input: string }): Promise<StepRecord>;
  /**
   * Sends the step: appends `message` (its user turn) and records its seq on the step, in one transaction,
   * unless the step was sent already. Resolves with the stored row, or null when it had been sent (nothing
   * is appended). Rejects when the step was never started.
   */
  sendStep(sessionId: string, step: number, message: AppendMessage): Promise<StoredMessage | null>;
  /** Marks the step done. */
  finishStep(sessionId: string, step: number): Promise<void>;
  /** The session's step records, by step. */
  sessionSteps(sessionId: string): Promise<StepRecord[]>;
}

// ---- per-session key/value (loop and heartbeat state, compaction guards) ----

export interface StateOps {
  getState<T = unknown>(sessionId: string, key: string): Promise<T | undefined>;
  setState(sessionId: string, key: string, value: unknown): Promise<void>;
  deleteState(sessionId: string, key: string): Promise<void>;
}

// ---- compaction leases ----

export interface Lease {
  session_id: string;
  holder: ProcessIdentity;
  acquired_at: number;
  expires_at: number;
}

export type AcquireResult =
  | { acquired: true; lease: Lease; took_over?: "expired" | "dead_holder" }
  | { acquired: false; current: Lease };

export interface LeaseRef {
  sessionId: string;
  /** The holder's nonce: it alone identifies one acquisition. */
  nonce: string;
}

export interface LeaseOps {
  readLease(sessionId: string): Promise<Lease | undefined>;
  /** Free → take; expired → take; holder provably dead on this host → take; otherwise refuse. */
  acquireLease(
    request: { sessionId: string; holder: ProcessIdentity; now: number; ttlMs: number },
  ): Promise<AcquireResult>;
  /** Extends the holder's unexpired lease; false when it expired or belongs to someone else now. */
  refreshLease(ref: LeaseRef & { now: number; ttlMs: number }): Promise<boolean>;
  /** Frees the lease only if `nonce` still holds it; true when it did. */
  releaseLease(ref: LeaseRef): Promise<boolean>;
}

// ---- workspace locks ----

/** The one session writing a working tree (docs/workspaces.md): held like a lease, keyed by the tree's real path. */
export interface WorkspaceLock {
  path: string;
  session_id: string;
  holder: ProcessIdentity;
  acquired_at: number;
  expires_at: number;
}

export type WorkspaceAcquire =
  | { acquired: true; took_over?: "expired" | "dead_holder" }
  | { acquired: false; current: WorkspaceLock };

export interface WorkspaceLockOps {
  /**
   * Free → take; held by the same session (a resume) → take; expired → take; holder provably dead on this
   * host → take; otherwise refuse, naming the holder.
   */
  acquireWorkspace(
    request: { path: string; sessionId: string; holder: ProcessIdentity; now: number; ttlMs: number },
  ): Promise<WorkspaceAcquire>;
  /** Extends the holder's unexpired lock; false when it expired or another holder took it. */
  refreshWorkspace(ref: { path: string; nonce: string; now: number; ttlMs: number }): Promise<boolean>;
  /** Frees the lock only if `nonce` still holds it; true when it did. */
  releaseWorkspace(ref: { path: string; nonce: string }): Promise<boolean>;
}

// ---- compaction commit and log ----

export type CompactionKind = "summarize" | "micro_summarize" | "prune_tool_results";

/** How a compaction pass ended: only `committed` changed the transcript. */
export type PassOutcome =
  | "committed"
  | "refused_growth"
  | "cooldown"
  | "breaker"
  | "failed"
  | "nothing_to_do";

export interface ReplacementRow {
  role: Role;
  content: string;
  kind: "summary" | "pruned";
  /** Prompt position: that of the (archived) row it stands for. */
  pos: number;
  tool_call_id?: string;
  name?: string;
}

/** Content-free measurements of one pass, logged with it. Tokens are the compactor's estimate. */
export interface PassMeasures {
  /** The hard compaction threshold in tokens (threshold × window); occupancy is after ÷ this. */
  thresholdTokens: number;
  windowTokens: number;
  durationMs: number;
  /** Rows the pass archived (summarised, folded or pruned) and their tokens. */
  absorbedMessages: number;
  absorbedTokens: number;
  /** Tokens of the session's (rolling) summary after the pass; 0 when there is none. */
  summaryTokens: number;
}

export interface CommitRequest {
  sessionId: string;
  /** The lease nonce this compaction holds. */
  nonce: string;
  now: number;
  kind: CompactionKind;
  /** Why it ran: `pre_api`, `post_tool`, `manual`, `overflow`, `between_turns`, `proactive_prune`. */
  reason: string;
  /** Ids of the active rows being replaced. */
  archive: readonly number[];
  insert: readonly ReplacementRow[];
  beforeTokens: number;
  detail: Record<string, unknown>;
  /** Logged with the row; absent measures are logged as null. */
  measures?: PassMeasures;
  /** Estimates the committed transcript (its active rows, prompt order); runs inside the transaction. */
  estimate(rows: readonly TranscriptRow[]): number;
  /** One session state value changed in the same transaction; `update` returns undefined to leave it. */
  state?: { key: string; update(current: unknown, afterTokens: number): unknown };
}

export type CommitResult =
  | { committed: true; compactionId: number; afterTokens: number; log: CompactionLogRow }
  | { committed: false; reason: string };

/** A pass that changed nothing, logged without a lease (refused, blocked by a guard, failed, no-op). */
export interface PassRecord {
  sessionId: string;
  now: number;
  kind: CompactionKind;
  reason: string;
  outcome: Exclude<PassOutcome, "committed">;
  /** The estimate the pass saw; `after` equals it (nothing changed). */
  tokens: number;
  measures?: PassMeasures;
  /** Content-free detail (codes and numbers, never transcript text). */
  detail?: Record<string, unknown>;
}

/**
 * One compaction pass. `messages_removed` is active rows before − after; the `total_*` columns are the
 * session's running totals including this row (passes, committed passes, committed `summarize` passes, and
 * tokens saved: the sum of before − after over committed passes, negative when passes grew the transcript).
 */
export interface CompactionLogRow {
  id: number;
  session_id: string;
  kind: CompactionKind;
  reason: string;
  outcome: PassOutcome;
  before_tokens: number;
  after_tokens: number;
  messages_removed: number;
  created_at: number;
  detail: Record<string, unknown>;
  threshold_tokens: number | null;
  window_tokens: number | null;
  /** after_tokens ÷ threshold_tokens; null when the threshold is unknown. */
  occupancy: number | null;
  duration_ms: number | null;
  absorbed_messages: number | null;
  absorbed_tokens: number | null;
  summary_tokens: number | null;
  total_passes: number;
  total_committed: number;
  total_hard: number;
  total_saved_tokens: number;
}

export interface CompactionOps {
  /**
   * One transaction: re-checks that `nonce` holds an unexpired lease (else writes nothing), archives the
   * replaced rows (active = 0, tagged with the log id; all of them still active, else writes nothing),
   * inserts the replacements at the positions of the rows they stand for and logs the compaction (outcome
   * `committed`, with the running totals). Rows appended since the compaction started keep their positions,
   * after the compacted set.
   */
  commitCompaction(request: CommitRequest): Promise<CommitResult>;
  /** Logs a pass that changed nothing (no lease needed), with the running totals; resolves with its row. */
  recordCompactionPass(record: PassRecord): Promise<CompactionLogRow>;
  /** The session's compaction log, oldest first. */
  compactionLog(sessionId: string): Promise<CompactionLogRow[]>;
}

// ---- schedule slot claims ----

export interface SlotClaim {
  job: string;
  slot: number;
  /** Recorded with the claim, e.g. `catch-up`. */
  note?: string;
  /** `schedule.overlap`: what to do when the job's previous run is still going (default skip). */
  overlap?: Overlap;
}

export type ClaimOutcome =
  /** `cancelled`: the live run this claim replaced (`overlap: cancel_previous`), recorded `cancelled`. */
  | { outcome: "claimed"; cancelled?: { slot: number; holder_nonce: string | null } }
  /** Another claimant holds (or held) this slot. */
  | { outcome: "taken" }
  /** The job's previous run is still going: recorded as `skipped`. */
  | { outcome: "overrun"; running_slot: number }
  /** The job's previous run is still going: recorded `queued` (`overlap: queue`); see `startQueued`. */
  | { outcome: "queued"; running_slot: number };

/**
 * One (job, slot). Status: `running` (first attempt) → `rerunning` (taken over once from a dead or silent
 * holder, `schedule.on_crash: rerun`) → `success | failed | limit | interrupted`; `crashed` (its holder died
 * mid-run and `on_crash: skip` keeps it from running twice); `skipped` (overrun, or missed with
 * `catch_up: none`, or `schedule.overlap: queue` with a slot already queued); `queued` (`overlap: queue`:
 * waiting for the previous run to end, then `running`); `cancelled` (`overlap: cancel_previous`: a newer slot
 * replaced it; its holder interrupts it); `abandoned` (its holder died and the slot was superseded, or died
 * again after the takeover).
 */
export interface RunRow {
  job: string;
  slot: number;
  status: string;
  holder_host: string | null;
  holder_pid: number | null;
  holder_started: string | null;
  holder_nonce: string | null;
  claimed_at: number;
  lease_expires_at: number | null;
  finished_at: number | null;
  session_id: string | null;
  note: string | null;
}

export interface ClaimLease {
  now: number;
  lease_ms: number;
}

export interface RunFinish {
  claim: { job: string; slot: number };
  holder: ProcessIdentity;
  outcome: { status: string; session_id: string | null; now: number; note?: string };
}

export interface ScheduleOps {
  /**
   * Claims due slots in one transaction, at most once per (job, slot) across every process. A slot whose job
   * still has a live run is recorded as skipped; a stale run of the same job is superseded (abandoned).
   */
  claimSlots(
    claims: readonly SlotClaim[],
    holder: ProcessIdentity,
    lease: ClaimLease,
  ): Promise<ClaimOutcome[]>;
  /** Records a missed slot without running it; false when the slot already has a row. */
  recordSkipped(claim: SlotClaim, holder: ProcessIdentity, now: number): Promise<boolean>;
  /** Every live (`running`, `rerunning`) claim. */
  liveClaims(): Promise<RunRow[]>;
  /**
   * Takes over `row` if it is still held by the same nonce and stale: with `on_crash: "rerun"` (the default
   * here) a `running` row becomes `rerunning` under `holder` (once); with `"skip"` it is recorded `crashed`
   * and never started again; a stale `rerunning` row is abandoned. The sessions of the job its holder left
   * `running` become `interrupted` in the same transaction. True when `holder` should run the slot.
   */
  takeOverClaim(
    row: RunRow,
    holder: ProcessIdentity,
    lease: ClaimLease & { on_crash?: "skip" | "rerun" },
  ): Promise<boolean>;
  /**
   * Starts `holder`'s queued slots among `claims` whose job has no live run left: each becomes `running`
   * under a fresh lease; the lease of one still waiting is extended. Returns the slots started and those still
   * waiting (any other is gone: superseded).
   */
  startQueued(
    claims: readonly { job: string; slot: number }[],
    holder: ProcessIdentity,
    lease: ClaimLease,
  ): Promise<{ started: { job: string; slot: number }[]; waiting: { job: string; slot: number }[] }>;
  /** Extends the lease of `holder`'s live claims; returns the claims it still holds. */
  renewClaims(holder: ProcessIdentity, lease: ClaimLease): Promise<{ job: string; slot: number }[]>;
  /**
   * Records how runs ended (or, for a queued slot, why it never started), in one transaction; false for each
   * run its holder no longer owns.
   */
  finishRuns(finishes: readonly RunFinish[]): Promise<boolean[]>;
  /** The latest slot with any row for `job`, or null. */
  lastRecordedSlot(job: string): Promise<number | null>;
  /** The job's rows, newest slot first. */
  recentRuns(job: string, limit: number): Promise<RunRow[]>;
}

// ---- the run queue (`hermes submit`, workers in `hermes daemon`) ----

/**
 * `queued` → `running` → how its session ended; or `cancelled`, or `crashed` (its worker died, on_crash: skip).
 * `waiting_approval` is `running` as shown: the run holds a pending approval (`approval: {api: true}`); the
 * stored status stays `running`, so claims, leases and recovery never see it.
 */
export type QueuedRunStatus =
  | "queued"
  | "running"
  | "waiting_approval"
  | "success"
  | "failed"
  | "limit"
  | "interrupted"
  | "cancelled"
  | "crashed";

/** A run handed over to the queue: the job as it was when submitted, and how it is to be scheduled. */
export interface NewQueuedRun {
  /** Default: a new time-sortable id. */
  id?: string;
  /** The job's name. */
  job: string;
  job_path: string | null;
  /** The resolved job as submitted (JSON): run as it was, whatever happens to its file afterwards. */
  job_snapshot: string;
  inputs: Record<string, string>;
  /** Idempotency key: a second submit with the same key returns the first run. */
  key?: string | null;
  /** Higher first; default 0. */
  priority?: number;
  /** Not claimed before this time (epoch ms). */
  not_before?: number | null;
  /** Concurrency group (its template expanded) and the most runs of it running at once. */
  group?: string | null;
  group_limit?: number | null;
  /** Cancel the group's queued and running runs when this one is submitted (`concurrency.cancel_in_progress`). */
  cancel_in_progress?: boolean;
  /** The model it calls: a rate-limit hold on it holds the run back. */
  model?: string | null;
  /** What happens when its worker dies mid-run (default skip: recorded `crashed`). */
  on_crash?: "skip" | "rerun";
  /** Labels stored with the run (JSON object). */
  labels?: Record<string, string>;
  /** What submitted it (default `cli`). */
  trigger?: RunTrigger;
  /** Only the worker with this nonce claims it (a daemon's cron slot: the daemon holding the slot runs it). */
  pinned_to?: string | null;
  now: number;
}

/** What submitted a queued run: `hermes submit`, a cron slot of a daemon, a webhook delivery, the HTTP API. */
export type RunTrigger = "cli" | "schedule" | "webhook" | "api";

/** A queued run's record (a CLI contract with `runs show --json`: add fields, never rename). */
export interface QueuedRun {
  id: string;
  job: string;
  job_path: string | null;
  job_snapshot: string;
  inputs: Record<string, string>;
  key: string | null;
  priority: number;
  not_before: number | null;
  status: QueuedRunStatus;
  /** How many workers started it (2 after a takeover with on_crash: rerun). */
  attempts: number;
  on_crash: "skip" | "rerun";
  group: string | null;
  group_limit: number | null;
  model: string | null;
  labels: Record<string, string>;
  /** What submitted it. */
  trigger: RunTrigger;
  /** The nonce of the only worker that may claim it, if any. */
  pinned_to: string | null;
  /** The worker that holds it while it runs. */
  holder: ProcessIdentity | null;
  lease_expires_at: number | null;
  /** A cancel was asked for while it ran: its worker stops it. */
  cancel_requested: boolean;
  session_id: string | null;
  /** The run's result object once it ended (null for a run that never ran or whose worker died). */
  result: unknown;
  exit_code: number | null;
  note: string | null;
  submitted_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface ClaimRequest {
  holder: ProcessIdentity;
  now: number;
  lease_ms: number;
  /** At most this many runs (the worker's free slots). */
  max: number;
  /** config.yaml `queue.max_running`: no claim beyond this many running runs in the whole store. */
  max_running?: number | null | undefined;
  /**
   * Which runs: `only` those pinned to the holder (its cron slots), `none` of those, or (default) any run
   * it may claim.
   */
  pinned?: "only" | "none";
}

export interface RunEnd {
  id: string;
  holder: ProcessIdentity;
  status: Exclude<QueuedRunStatus, "queued" | "running" | "crashed">;
  session_id: string | null;
  result: unknown;
  exit_code: number | null;
  now: number;
  note?: string | null;
  /**
   * The run's last events, appended (as `appendRunEvents` does) with its end in one write, whether or not
   * `holder` still holds it.
   */
  events?: readonly unknown[];
}

export interface ListRunsOptions {
  status?: string;
  job?: string;
  /** The run submitted with this idempotency key. */
  key?: string;
  limit?: number;
  /**
   * Only runs after this one in the list's order (newest first: submitted_at, then id, both descending): the
   * next page of a keyset pagination, as fast on the thousandth page as on the first.
   */
  before?: { submitted_at: number; id: string };
  /** Only runs holding every one of these labels with these values. */
  labels?: Record<string, string>;
  /** Only runs submitted at or after this time (epoch ms). */
  since?: number;
  /** Only runs submitted before this time (epoch ms). */
  until?: number;
}

/** One stored event of a run (what `runs events` prints), numbered from 1. */
export interface RunEventRow {
  run_id: string;
  seq: number;
  event: unknown;
}

/** One completion notification of a run: an HTTP delivery or a command, and how its attempts went. */
export interface RunDelivery {
  /** Sent with every attempt (`X-Hermes-Delivery`): a receiver tells a retry from a new delivery by it. */
  id: string;
  run_id: string;
  /** The URL, or the command line. */
  target: string;
  /** `run.success`, `run.failed`, … */
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  /** The HTTP status (or exit code) of the last attempt, null when it got none. */
  response_status: number | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

export interface RunQueueOps {
  /**
   * Stores a queued run in one transaction; with a `key` some run already has, stores nothing and returns
   * that run (`deduplicated`). `cancel_in_progress` cancels the group's other queued runs and asks its
   * running ones to stop, in the same transaction.
   */
  submitRun(run: NewQueuedRun): Promise<{ run: QueuedRun; deduplicated: boolean }>;
  getRun(id: string): Promise<QueuedRun | undefined>;
  /** An id or a unique id prefix; rejects with NotFoundError naming it. */
  resolveRunId(ref: string): Promise<string>;
  /** Newest first. */
  listRuns(options?: ListRunsOptions): Promise<QueuedRun[]>;
  /**
   * Claims due queued runs for `holder` in one transaction: highest priority, then oldest first, none whose
   * group is at its limit or whose model is held, none pinned to another worker, none beyond `max_running`. Each run is claimed by one
   * worker only, whatever number claim at once; a claimed run is `running` with `attempts` + 1.
   */
  claimRuns(request: ClaimRequest): Promise<QueuedRun[]>;
  /** Pins a queued run to the worker with `nonce` (a slot taken over by another daemon); false if not queued. */
  pinRun(id: string, nonce: string): Promise<boolean>;
  /** Records the session a claimed run opened; false when `holder` no longer holds it. */
  setRunSession(id: string, holder: ProcessIdentity, sessionId: string): Promise<boolean>;
  /**
   * Extends the leases of `holder`'s running runs. Returns those it still holds, and among them those a
   * cancel was asked for.
   */
  renewRuns(holder: ProcessIdentity, lease: ClaimLease): Promise<{ held: string[]; cancel: string[] }>;
  /** `holder`'s running runs a cancel was asked for (a cheap read, polled while runs are in flight). */
  cancelRequests(holder: ProcessIdentity): Promise<string[]>;
  /** Records how a run ended; false when `holder` no longer holds it (taken over, or recorded crashed). */
  finishRun(end: RunEnd): Promise<boolean>;
  /**
   * A queued run becomes `cancelled` at once; a running one is asked to stop (its worker records it
   * `cancelled`). A run that ended is left as it is. Resolves with the run as it is now.
   */
  cancelRun(id: string, now: number): Promise<QueuedRun>;
  /**
   * Running runs whose worker is provably dead on this host or whose lease expired: with `on_crash: rerun`
   * and one attempt, queued again (another worker takes it over, once); otherwise recorded `crashed`. Their
   * sessions left running are marked interrupted. Resolves with the runs handled, as they are now.
   */
  recoverRuns(request: { now: number }): Promise<QueuedRun[]>;
  /**
   * Runs that ended without a worker to tell of it (cancelled while queued, by `runs cancel` or a group's
   * `cancel_in_progress`): each is handed to one caller only, once, to send its notifications.
   */
  takeUnnotifiedRuns(): Promise<QueuedRun[]>;
  /** How many runs of `group` are running now. */
  groupRunning(group: string): Promise<number>;
  /** Holds back queued runs of `model` until `until` (a provider's rate-limit answer); a later hold wins. */
  holdModel(model: string, until: number): Promise<void>;
  /** The model holds still in force at `now`: model → until. */
  modelHolds(now: number): Promise<Record<string, number>>;
  /** Stores a delivery as it is now (inserted, or its attempts and outcome updated by id). */
  recordDelivery(delivery: RunDelivery): Promise<void>;
  /** The run's deliveries, oldest first. */
  runDeliveries(runId: string): Promise<RunDelivery[]>;
  /** Appends a run's events (in order, after those stored). */
  appendRunEvents(runId: string, events: readonly unknown[]): Promise<void>;
  /** The run's events after `afterSeq`, in order. */
  runEvents(runId: string, afterSeq: number): Promise<RunEventRow[]>;
  /**
   * Calls `wake` when runs were submitted, cancelled or finished in any process (PostgreSQL LISTEN/NOTIFY);
   * resolves with a function that stops listening. A store without notifications never calls it (the
   * caller polls).
   */
  watchRuns(wake: (runId: string) => void): Promise<() => Promise<void>>;
  /**
   * Calls `wake` with a run's id when events of it were appended in any process (PostgreSQL LISTEN/NOTIFY,
   * its own channel: workers are not woken by them); resolves with a function that stops listening. A store
   * without notifications never calls it.
   */
  watchRunEvents(wake: (runId: string) => void): Promise<() => Promise<void>>;
}

// ---- plugin state (`ctx.state`) ----

export interface PluginStateOps {
  /** The stored value (JSON), or undefined when the key is absent. */
  getPluginState(plugin: string, key: string): Promise<unknown>;
  setPluginState(plugin: string, key: string, value: unknown): Promise<void>;
  /** True when the key existed. */
  deletePluginState(plugin: string, key: string): Promise<boolean>;
  /** The plugin's keys starting with `prefix`, sorted. */
  pluginStateKeys(plugin: string, prefix: string): Promise<string[]>;
}

// ---- full-text search ----

/** A word or a phrase (several words in a row); `prefix`: the last word may be the start of a word. */
export interface SearchTerm {
  words: string[];
  prefix: boolean;
}

export interface SearchRequest {
  /** All terms must match (AND). */
  terms: readonly SearchTerm[];
  job?: string;
  limit: number;
  /** `newest`: most recently stored first; `relevance`: best match first. */
  order: "newest" | "relevance";
}

/** A stored message that matched, compacted rows and archived sessions included. */
export interface SearchRow {
  session_id: string;
  job: string;
  session_archived: boolean;
  seq: number;
  role: Role;
  kind: MessageKind;
  active: boolean;
  created_at: number;
  content: string;
}

export interface SearchOps {
  /** Brings the index up to date with every message; returns how many rows it added. */
  syncSearchIndex(): Promise<number>;
  /** Catches the index up, then searches every stored message. */
  searchMessages(request: SearchRequest): Promise<SearchRow[]>;
}

// ---- listing and administration ----

/** One session as `hermes sessions list` shows it (a CLI contract: add fields, never rename). */
export interface SessionSummary {
  id: string;
  job: string;
  status: string;
  terminal_reason: string | null;
  model: string | null;
  parent_id: string | null;
  created_at: string;
  updated_at: string;
  ended_at: string | null;
  archived: boolean;
  archived_at: string | null;
  turns: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Part of prompt_tokens: read from and written to the provider's prompt cache. */
  cached_tokens: number;
  cache_write_tokens: number;
  /** Part of completion_tokens. */
  reasoning_tokens: number;
  /** USD of the session's model calls; null when any was of a model without a known price. */
  cost_usd: number | null;
  /** The session's labels (`labels:`, `--label`, the CI's). */
  labels: Labels;
}

export interface ListSessionsOptions {
  job?: string;
  status?: string;
  /** Only sessions created at or after this time. */
  since?: number;
  /** true: only archived sessions; otherwise only unarchived ones. */
  archived?: boolean;
  limit?: number;
}

export interface BusySession {
  id: string;
  /** Who holds it, e.g. `running in pid 4242 on build-7`. */
  reason: string;
}

export interface ArchiveResult {
  /** Sessions whose archived state changed. */
  changed: string[];
  /** Sessions that were already in the requested state. */
  unchanged: string[];
}

export interface PruneRequest {
  /** Sessions whose last update is older than this many milliseconds are pruned. */
  olderThanMs: number;
  job?: string;
  /** Compute the plan; change nothing. */
  dryRun?: boolean;
  /** About this many messages deleted per write (whole sessions; at least one per write). Default 2 000. */
  batchMessages?: number;
}

export interface PruneResult {
  /** Sessions updated before this are candidates. */
  cutoff: number;
  /** The sessions pruned (or, in a dry run, that would be), oldest first. */
  ids: string[];
  /** Candidates left alone because a live process holds them. */
  skipped: BusySession[];
}

/** A session still `running`, with active recurring work, whose owner is provably dead or stalled. */
export interface OrphanedSession extends SessionOwner {
  id: string;
  job: string;
  /** The session's stored values of the keys asked for (absent keys are left out). */
  state: Record<string, unknown>;
}

export interface AdminOps {
  /** Newest first. */
  listSessions(options?: ListSessionsOptions): Promise<SessionSummary[]>;
  /** The same list, each session as the JSON text of its SessionSummary (what `list --json` prints). */
  listSessionsJson(options?: ListSessionsOptions): Promise<string[]>;
  getSessionSummary(id: string): Promise<SessionSummary | undefined>;
  /**
   * Resolves, re-checks and deletes in one transaction, with messages, state, leases and log; schedule runs
   * keep their slot but lose the session. All or none: an unknown ref or a busy session (unless `force`)
   * rejects (NotFoundError, SessionBusyError) and nothing is deleted. Resolves with the deleted ids.
   */
  deleteSessions(refs: readonly string[], options?: { force?: boolean }): Promise<string[]>;
  /** Hides sessions from the list, keeping everything; busy sessions are refused unless `force`. */
  archiveSessions(refs: readonly string[], options?: { force?: boolean }): Promise<ArchiveResult>;
  unarchiveSessions(refs: readonly string[]): Promise<ArchiveResult>;
  /**
   * Deletes sessions idle longer than `olderThanMs`, archived ones included, skipping (never forcing) those a
   * live process holds. A dry run returns exactly the ids a real run deletes, unless the store changes.
   */
  pruneSessions(request: PruneRequest): Promise<PruneResult>;
  /**
   * The sessions among `ids` a live process holds: an owner that is not provably dead (status running or
   * idle), or an unexpired compaction lease whose holder is not provably dead.
   */
  findBusySessions(ids: readonly string[]): Promise<BusySession[]>;
  /**
   * Running, unarchived sessions holding a state under one of `keys`, whose owner is provably dead on this
   * host or stalled (its ownership renewal overdue), with those states: which of them keeps a session going is the caller's rule, not the store's.
   */
  orphanedSessions(keys: readonly string[]): Promise<OrphanedSession[]>;
}

// ---- what model calls cost (`hermes cost`) ----

/** A grouping of `hermes cost`: by job, by model, by UTC day, or by the value of one label. */
export type CostDimension = "job" | "model" | "day" | `label:${string}`;

export interface CostQuery {
  /** Calls at or after this time (epoch ms); absent: from the first. */
  since?: number;
  /** Calls before this time (epoch ms); absent: up to now. */
  until?: number;
  /** Group by these, in order; none: one total. */
  by: readonly CostDimension[];
}

/** The model calls of one group and what they used and cost. */
export interface CostGroup {
  /**
   * One value per dimension of the query, in order: the job, the model, the day (`YYYY-MM-DD`, UTC), the
   * label's value; null where a call has none (no such label, an unknown model).
   */
  keys: (string | null)[];
  calls: number;
  /** Sessions (roots) the calls were made for. */
  sessions: number;
  input_tokens: number;
  /** Parts of input_tokens: read from and written to the provider's prompt cache. */
  cached_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  /** Part of output_tokens. */
  reasoning_tokens: number;
  /** USD of the priced calls. */
  cost_usd: number;
  /** Calls of a model without a known price: their tokens count, their cost is not in cost_usd. */
  unpriced_calls: number;
}

/** One recorded model call, as a copy carries it (its id excepted: the receiving store numbers its own). */
export interface ModelCallRow {
  /** The session it is attributed to (the root of the session that made it). */
  session_id: string;
  /** The session that made it. */
  caller_id: string;
  job: string;
  labels: Labels;
  at: number;
  provider: string | null;
  model: string | null;
  prompt_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  /** null: a model without a known price. */
  cost_usd: number | null;
}

export interface CostOps {
  /** The model calls in the query's time range grouped as asked, sorted by keys (a day's index, not a scan). */
  costReport(query: CostQuery): Promise<CostGroup[]>;
  /** Every session (root) with recorded model calls, deleted sessions included, sorted. */
  modelCallSessions(): Promise<string[]>;
  /** The model calls attributed to `sessionId`, in the order they were recorded. */
  exportModelCalls(sessionId: string): Promise<ModelCallRow[]>;
  /**
   * Stores model calls verbatim in one transaction, leaving those the store already has: of each set of
   * identical calls it adds only as many as it lacks, so a copy run again adds nothing. Resolves with how
   * many were stored.
   */
  importModelCalls(rows: readonly ModelCallRow[]): Promise<number>;
}

// ---- what the store holds, and copying sessions between stores (`hermes store info|migrate`) ----

/** The rows of each table, for `hermes store info` and for verifying a copy. */
export interface StoreCounts {
  sessions: number;
  messages: number;
  session_state: number;
  compaction_log: number;
  schedule_runs: number;
  plugin_state: number;
}

export interface StoreInfo {
  backend: "sqlite" | "postgres";
  /** The migrations applied. */
  schema_version: number;
  counts: StoreCounts;
}

/**
 * One session with everything that belongs to it, as stored (ids of messages and log rows excepted: the
 * receiving store numbers its own). What a copy to another store carries.
 */
export interface SessionExport {
  session: SessionRow;
  /** Every row, those replaced by compaction included, by seq. */
  messages: StoredMessage[];
  /** The per-session key/value rows, by key. */
  state: { key: string; value: unknown }[];
  /** The compaction log, oldest first. */
  compactions: CompactionLogRow[];
  /** The step records, by step. */
  steps: StepRecord[];
}

/** One plugin's stored value (`ctx.state`), as a copy carries it. */
export interface PluginStateRow {
  plugin: string;
  key: string;
  /** The stored value (JSON). */
  value: unknown;
  updated_at: number;
}

/**
 * Copying a store: sessions one at a time, then the rows that belong to no session (schedule runs by job,
 * plugin state by plugin). Compaction leases are not copied: each names a process of the source store and
 * lives for seconds. Imports store rows verbatim and leave what the receiving store already has, so that a
 * copy run again adds only what is new.
 */
export interface CopyOps {
  storeInfo(): Promise<StoreInfo>;
  /** Every session id, archived ones included, oldest first. */
  sessionIds(): Promise<string[]>;
  exportSession(id: string): Promise<SessionExport | undefined>;
  /**
   * Stores an exported session verbatim (its id, seqs, positions, active flags and times) in one transaction;
   * the next append follows its highest seq. False, writing nothing, when a session with that id exists.
   */
  importSession(data: SessionExport): Promise<boolean>;
  /** Every job with schedule-run rows (run history or live claims), sorted. */
  scheduleRunJobs(): Promise<string[]>;
  /** The job's schedule-run rows as stored, oldest slot first. */
  exportScheduleRuns(job: string): Promise<RunRow[]>;
  /**
   * Stores schedule-run rows verbatim (status, holder, lease, times, session) in one transaction; a row whose
   * (job, slot) the store already has is left as it is. Resolves with how many rows were stored.
   */
  importScheduleRuns(rows: readonly RunRow[]): Promise<number>;
  /** Every plugin with stored state, sorted. */
  statefulPlugins(): Promise<string[]>;
  /** The plugin's values with their update times, by key. */
  exportPluginState(plugin: string): Promise<PluginStateRow[]>;
  /**
   * Stores plugin values verbatim in one transaction; a (plugin, key) the store already has is left as it
   * is. Resolves with how many values were stored.
   */
  importPluginState(rows: readonly PluginStateRow[]): Promise<number>;
  /** The jobs with queued runs (any status), sorted. */
  queuedRunJobs(): Promise<string[]>;
  /** The job's queued runs as stored (snapshot, claim, result), oldest first. */
  exportQueuedRuns(job: string): Promise<QueuedRun[]>;
  /** Stores queued runs verbatim in one transaction, leaving those whose id (or key) the store has. */
  importQueuedRuns(runs: readonly QueuedRun[]): Promise<number>;
  /** The runs with stored events, sorted. */
  runsWithEvents(): Promise<string[]>;
  /** Stores run events verbatim (their seq kept), leaving those the store has. */
  importRunEvents(rows: readonly RunEventRow[]): Promise<number>;
  /** The runs with notification deliveries, sorted. */
  runsWithDeliveries(): Promise<string[]>;
  /** Stores deliveries verbatim (their id kept), leaving those the store has. */
  importDeliveries(rows: readonly RunDelivery[]): Promise<number>;
  /** Every API token with its hash (never a secret: the store keeps none), oldest first. */
  exportApiTokens(): Promise<StoredApiToken[]>;
  /** Stores API tokens verbatim, leaving those whose id the store has. */
  importApiTokens(rows: readonly StoredApiToken[]): Promise<number>;
}

/** An API token as a copy carries it: its hash too. */
export type StoredApiToken = ApiToken & { hash: string };

export interface RunCountOps {
  /** How many runs the store holds in each status (statuses without runs absent), for `/metrics`. */
  runCounts(): Promise<Record<string, number>>;
}

/** An API token as stored: never its secret, only the secret's hash (`tokenByIdOf` returns it to compare). */
export interface ApiToken {
  /** Public: the token's prefix, what `tokens revoke` names. */
  id: string;
  name: string | null;
  scopes: string[];
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export interface NewApiToken {
  id: string;
  name: string | null;
  /** Hex SHA-256 of the whole token. */
  hash: string;
  scopes: string[];
  expires_at: number | null;
  now: number;
}

/** How an approval stands: asked, answered, timed out, or its run stopped first. */
export type ApprovalStatus = "pending" | "allowed" | "denied" | "expired" | "cancelled";

/**
 * A tool call outside the job's rules parked for a decision over the API (`approval: {api: true}`): stored
 * with its arguments redacted (the session's store outlet), decided once.
 */
export interface Approval {
  id: string;
  /** The queued run it holds, null for a run not from the queue (`hermes run`). */
  run_id: string | null;
  session_id: string;
  job: string;
  tool: string;
  tool_call_id: string;
  /** The MCP server of the tool, when it has one. */
  server: string | null;
  arguments: Record<string, unknown>;
  /** What the call acts on as it will be used (a file's real path), when the tool says. */
  subject: string | null;
  /** Why the rules do not allow it. */
  reason: string;
  /** The rule the job could add to allow such calls without asking. */
  rule: string;
  status: ApprovalStatus;
  /** The decider's reason, or why it expired or was cancelled. */
  decision_reason: string | null;
  /** The API token that decided it (its public id). */
  decided_by: string | null;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
}

export type NewApproval = Omit<Approval, "status" | "decision_reason" | "decided_by" | "decided_at">;

export interface ApprovalDecision {
  id: string;
  status: Exclude<ApprovalStatus, "pending">;
  reason: string | null;
  by: string | null;
  now: number;
}

export interface ListApprovalsOptions {
  /** Default: every status. `pending` leaves out those whose time is up at `now`. */
  status?: ApprovalStatus;
  run_id?: string;
  /** For `status: pending` (default: no such filter). */
  now?: number;
  limit?: number;
}

export interface ApprovalOps {
  createApproval(approval: NewApproval): Promise<Approval>;
  getApproval(id: string): Promise<Approval | undefined>;
  /** Oldest first. */
  listApprovals(options?: ListApprovalsOptions): Promise<Approval[]>;
  /**
   * Decides a pending approval in one statement: only the first decision counts (`decided: false` and the
   * approval as the first decided it, for every later one). Undefined when the store has no such id.
   */
  decideApproval(decision: ApprovalDecision): Promise<{ approval: Approval; decided: boolean } | undefined>;
  /**
   * Calls `wake` with an approval's id when it is decided in any process (PostgreSQL LISTEN/NOTIFY); resolves
   * with a function that stops listening. A store without notifications never calls it (the caller polls).
   */
  watchApprovals(wake: (id: string) => void): Promise<() => Promise<void>>;
}

export interface TokenOps {
  /** Stores a new token; an id the store already has is an error (ids are random). */
  createToken(token: NewApiToken): Promise<ApiToken>;
  /** The token with its stored hash, revoked or not; undefined when the store has no such id. */
  tokenById(id: string): Promise<(ApiToken & { hash: string }) | undefined>;
  /** Every token, oldest first. */
  listTokens(): Promise<ApiToken[]>;
  /** Marks the token revoked now (kept for listing); undefined when the store has no such id. */
  revokeToken(id: string, now: number): Promise<ApiToken | undefined>;
  /**
   * The secret stored under `name`, storing `fresh` first when there is none: the first caller's value wins
   * and every later caller, on any connection, gets that one (servers sharing the store sign alike).
   */
  serverSecret(name: string, fresh: string, now: number): Promise<string>;
}

/**
 * The store as its consumers see it: each depends on the roles it uses, not on all of Store.
 * Sessions: sessions, their transcripts, step records and per-session state (the session core, the agent).
 */
export type SessionStore = SessionOps & MessageOps & StepOps & StateOps & WorkspaceLockOps;
/** Compaction: leases on a session and the commit and log of passes. */
export type CompactionStore = LeaseOps & CompactionOps;
/** Recurring work: schedule slot claims and their runs (the daemon). */
export type ScheduleStore = ScheduleOps;
/** Plugins' own values. */
export type PluginStore = PluginStateOps;
/**
 * The run queue: submitted runs, their claims by workers, their ends and events; and whether its watches are
 * woken by other processes (a property of the backend, not of a part).
 */
export type RunQueueStore = RunQueueOps & RunCountOps & {
  /**
   * Whether the watch methods (runs, run events, approvals) are woken by other processes' writes; when false
   * a waiter must look at the store often (a SQLite file), when true a slow look is only a fallback.
   */
  readonly notifies: boolean;
};
/** Operators: listing and search, archive, delete and prune, copies between stores, spend reports. */
export type AdminStore = SearchOps & AdminOps & CopyOps & CostOps;
/** `hermes serve`'s API tokens. */
export type TokenStore = TokenOps;
/** Tool calls parked for a decision over the API. */
export type ApprovalStore = ApprovalOps;

/** Every role, and the handle's own files and close. */
export interface Store
  extends
    SessionStore,
    CompactionStore,
    ScheduleStore,
    PluginStore,
    AdminStore,
    RunQueueStore,
    TokenStore,
    ApprovalStore {
  /** Local files that hold the store (a SQLite file and its WAL), hidden from sandboxed tools; none for a server. */
  readonly files: readonly string[];
  close(): Promise<void>;
}
