/**
 * Opens a live session for a job over a new or stored session row: each part from its own folder's factory
 * (the provider from providers/, the store view from store/, tools from tools/, plugins from plugins/, MCP
 * servers from mcp/, the compactor from compaction/, loops from loops/), then the Agent that runs its turns.
 * Shared by every App operation that opens a session (runtime/app/).
 */
import { Agent } from "../agent/agent.ts";
import type { Clock } from "../core/clock.ts";
import type { EventBus } from "../core/events.ts";
import { type Hooks, noHooks } from "../core/hooks.ts";
import type { Labels } from "../core/labels.ts";
import type { ResolvedJob } from "../config/job.ts";
import { errorMessage, ValidationError } from "../core/errors.ts";
import { createCompactor } from "../compaction/compactor.ts";
import { lazyRecurring } from "../../loops/lazy_recurring.ts";
import type { Compactor, Recurring } from "../agent/seams.ts";
import { Budget } from "../agent/limits.ts";
import type { Logger } from "../core/log.ts";
import { requirePrice, type ResolvedModel } from "../providers/model.ts";
import { createProvider } from "../providers/create.ts";
import type { ProviderRegistry } from "../providers/registry.ts";
import { resolveModel } from "../config/model.ts";
import { currentProcess, type ProcessIdentity } from "../core/process_identity.ts";
import type { Provider, ServerWindow } from "../providers/provider.ts";
import type { Store } from "../store/store.ts";
import { newSessionId } from "../store/ids.ts";
import { type SessionOutlets, sessionOutlets } from "./outlets.ts";
import { redactorOf } from "../core/redact.ts";
import { sessionSecrets } from "./secrets.ts";
import { type PluginInfo, startSessionPlugins } from "../../plugins/session.ts";
import { startSessionMcp } from "../mcp/session.ts";
import type { SandboxProbe } from "../sandbox/probe.ts";
import { type NamedAsker, sessionAsker, sessionTools, toolEnv } from "../tools/session.ts";
import { reportingProgress } from "../providers/progress.ts";
import type { Cassette } from "../cassette/cassette.ts";
import type { ReplayTools, Tape } from "../cassette/tape.ts";
import { resolve } from "../core/path.ts";
import { candidateInScope, pathScope } from "../tools/paths.ts";
import type { SessionStatus, StoredMessage } from "../core/types.ts";
import { OWNER_MARGIN_MS, ownerGuardedStore, OwnerLease, progressBound } from "./owner_lease.ts";
import {
  agentsMdSection,
  DEFAULT_AGENTS_MD_BYTES,
  readAgentsMd,
  skillDirs,
  skillsSection,
} from "./instructions.ts";
import { discoverSkills, skillTool } from "../tools/skill.ts";
import type { Tool } from "../tools/tool.ts";
import { parseSize } from "../core/duration.ts";

/** Session state: the AGENTS.md files read when the session was new (a resumed run's result lists them). */
const INSTRUCTIONS_KEY = "session.instructions";

const PER_PROCESS_MEMORY =
  "no writable memory cgroup here: the shell tool's memory cap (RLIMIT_DATA) holds " +
  "per process, so a command's processes together may use more";
export interface OpenSessionOptions {
  job: ResolvedJob;
  store: Store;
  events: EventBus;
  clock: Clock;
  log: Logger;
  /** The process environment snapshot (model keys, `OPENAI_BASE_URL`, tool PATH). */
  env: Record<string, string>;
  /** This host's name in the session's owner and compaction leases (the CLI's `hostName`). */
  host: string;
  /** Aborts every turn of this session. */
  signal?: AbortSignal;
  /** The model providers the job may name (default: the built-in registry, runtime/providers/registry.ts). */
  providers?: ProviderRegistry;
  /** Continue this stored session (id, prefix or `latest`) instead of starting a new one. */
  resume?: string;
  /** The id of the new session (default: a fresh one), when the caller needs it before the session opens. */
  id?: string;
  /** The queued run this session works for (its approvals name it: the run shows waiting_approval). */
  runId?: string;
  /** The session that delegated this one's task (the delegate tool): stored as its `parent_id`. */
  parentId?: string;
  /** A delegated task: the delegating session's budget, whose cost cap bounds the task's spend too. */
  parentBudget?: Budget;
  /** Tools the caller adds to the session's own (the delegate tool of a job with agents:). */
  extraTools?: readonly Tool[];
  /** `--model`: overrides the model name. */
  model?: string;
  onDelta?: (text: string) => void;
  /**
   * The front-end's approver of tool calls outside the job's allow-lists (ACP: the editor; RPC: a client
   * that supports it). A job's own `approval:` takes precedence; with neither, such calls are denied.
   */
  asker?: FrontEndAsker;
  /**
   * Record the session's model exchanges and tool executions into a cassette at this path, written when
   * the session ends (`hermes run --record`; the job's `record:` when absent).
   */
  record?: string;
  /**
   * Serve every model answer from this cassette instead (`hermes replay`): the job's provider is never
   * built. `tools`: serve tool results from it too, or run the tools and compare.
   */
  replay?: { cassette: Cassette; tools: ReplayTools };
}

/** A front-end's approver and how denials name it. */
export type FrontEndAsker = NamedAsker;

export interface LiveSession {
  readonly id: string;
  readonly agent: Agent;
  readonly budget: Budget;
  readonly model: ResolvedModel;
  readonly provider: Provider;
  readonly hooks: Hooks;
  readonly job: ResolvedJob;
  /** The session's labels (stored with it; in the result and the OpenTelemetry resource). */
  readonly labels: Labels;
  /** `/loop` and `/heartbeat` of this session, and the driver of their later ticks. */
  readonly recurring: Recurring;
  /** The session's compactor (also behind `/compress`). */
  readonly compactor: Compactor;
  /** The plugins loaded for this session: what each registered and was granted. */
  readonly plugins: readonly PluginInfo[];
  /**
   * `off` when the shell tool, a plugin or an MCP server opted out of the OS sandbox (the result says so);
   * `on` for a sandboxed shell tool; null otherwise.
   */
  readonly sandbox: "on" | "off" | null;
  /** The session's store view: every value written through it has the session's secrets replaced. */
  readonly store: Store;
  /**
   * Where the session's output leaves (its store view, its event emitter, streamed text, its result), each
   * replacing the session's secrets (process environment, `model.api_key_env`, `redact:`).
   */
  readonly outlets: SessionOutlets;
  /** The AGENTS.md files the session's system prompt holds (real paths, root first): the result's `instructions`. */
  readonly instructions: readonly string[];
  /**
   * Counts as the session's progress (its owner lease): work done for it elsewhere, such as a delegated
   * task's session, which emits under its own id.
   */
  progress(): void;
  /** Records the end (status, reason), fires on_session_end, emits session.end and stops plugins. */
  finish(status: SessionStatus, reason: string): Promise<void>;
}

export async function openSession(options: OpenSessionOptions): Promise<LiveSession> {
  const { job, clock, log } = options;
  // Everything the session stores, emits, streams or returns leaves through its outlets, which replace its
  // secrets: every part below is given the outlets' store and events, never the raw ones.
  const redact = redactorOf(sessionSecrets(options.env, job));
  const outlets = sessionOutlets(options.store, options.events, redact);
  const { events } = outlets;
  let store = outlets.store;
  const spec = job.spec;
  // output.schema is compiled by the turn that checks an answer, while the model works (turn.ts): ajv is
  // not on the path to the first model request.
  const model = resolveModel(spec.model, {
    env: options.env,
    dir: job.dir,
    override: options.model,
    recurringJob: spec.schedule ? spec.name : undefined,
    ...(options.providers ? { providers: options.providers } : {}),
  });
  if (spec.limits?.max_cost_usd !== undefined) requirePrice(model);
  const recordTo = options.replay ? undefined : cassetteWriter(options.record, job);
  // The cassette module loads only for a run that records or replays.
  const cassette = options.replay || recordTo ? await import("../cassette/tape.ts") : undefined;
  const tape: Tape | undefined = options.replay
    ? cassette!.replayTape(options.replay.cassette, { tools: options.replay.tools, redact })
    : recordTo
    ? cassette!.recordingTape(recordTo.write, { job, redact })
    : undefined;
  const providers = options.providers ? { providers: options.providers } : {};
  const build = () => createProvider(model, { env: options.env, clock, ...providers });
  const provider = tape ? await tape.provider(build) : await build();
  const resumed = options.resume
    ? (await store.getSession(await store.resolveSessionId(options.resume)))!
    : undefined;
  const id = resumed?.id ?? options.id ?? newSessionId(clock.now());
  // A new session's labels, with secrets replaced like everything it stores; a resumed one keeps its own.
  const labels: Labels = resumed?.labels ??
    Object.fromEntries(Object.entries(job.labels ?? {}).map(([key, value]) => [key, redact(value)]));
  const me = currentProcess(options.host);
  // What assembly starts, it owns: a failure at any later step releases everything started before it, in
  // reverse order; on success the session takes it over (`finish`). In a long-lived server every missed
  // path would be a leak per failed request.
  await using started = new AsyncDisposableStack();
  // What the provider keeps open between calls (a Responses WebSocket) lives as long as the session.
  started.defer(() => provider.close?.());
  // The server's window (a local llama.cpp or Ollama tells it) is asked as soon as the provider exists; the
  // first step awaits the answer. Deno writes the request only once the process waits on its event loop
  // (docs/architecture.md, Start-up), so the round trip still falls there. Stopped and awaited with the
  // session, or with an assembly that fails.
  const windowProbe = probeServerWindow(provider, options.signal);
  started.defer(windowProbe.stop);
  // One turn at a time per session across processes: claimed before plugins start.
  if (resumed) {
    await claim(store, id, me);
    started.defer(() => releaseClaim(outlets.store, id, log));
  }
  // One bubblewrap probe serves the shell tool, the plugins and the MCP servers of this session. The store's
  // own files are hidden from commands. Its module (bubblewrap, seccomp, cgroups) is loaded on first use: a
  // session with nothing sandboxed does not load it before its first model request.
  let probing: Promise<SandboxProbe> | undefined;
  const probe = () =>
    probing ??= import("../sandbox/probe.ts").then(({ probeSandbox, probeOptions }) =>
      probeSandbox(probeOptions(options.env))
    );
  // A protected job's .git and own files stay read-only for every writer (runtime/core/protected_paths.ts).
  const readOnly = job.protect ? { read_only: job.protect.paths } : {};
  const builtins = await sessionTools(spec.tools, {
    ...(job.protect ? { protect: job.protect } : {}),
    job_dir: job.dir,
    env: options.env,
    hide: store.files,
    log: log.child("sandbox"),
    probe,
    ...(options.replay?.tools === "recorded" ? { served: true } : {}),
  });
  // Plugins start before the session row exists, so a plugin that is refused leaves no "running" session.
  const plugins = await startSessionPlugins(spec.plugins, {
    job_dir: job.dir,
    store,
    events,
    log: log.child("plugins"),
    session_id: id,
    env: options.env,
    probe,
    redact,
    ...readOnly,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  started.defer(async () => await plugins?.stop());
  const mcp = await startSessionMcp(spec.mcp_servers, {
    job_dir: job.dir,
    env: options.env,
    events,
    session_id: id,
    log: log.child("mcp"),
    probe,
    ...readOnly,
  });
  started.defer(async () => await mcp?.stop());
  // Skills are found again on resume (the skill tool serves them); AGENTS.md is read once, for a new session.
  const untrusted = job.protect !== undefined;
  const skills = await discoverSkills(
    skillDirs({
      jobDir: job.dir,
      ...(spec.skills ? { skills: spec.skills } : {}),
      conventions: spec.instructions?.skills ?? true,
      ...(options.env.HOME ? { home: options.env.HOME } : {}),
    }),
    { skipped: (path, why) => log.warn(`skill ${path} skipped: ${why}`) },
  );
  const agentsMd = options.resume || spec.instructions?.agents_md === false
    ? []
    : await readAgentsMd(job.dir, {
      maxBytes: parseSize(spec.instructions?.max_bytes ?? DEFAULT_AGENTS_MD_BYTES),
    });
  const tools = [
    ...builtins.tools,
    ...(skills.length ? [skillTool(skills)] : []),
    ...(plugins?.tools() ?? []),
    ...(mcp?.tools ?? []),
    ...(options.extraTools ?? []),
  ];
  const env = toolEnv(options.env, job.env);
  // The approver is a host program: it runs with Hermes's own environment, never the job's `env:`.
  const asker = await sessionAsker(
    spec.approval,
    {
      job: spec.name,
      job_dir: job.dir,
      host_env: options.env,
      // Parked through the outlets: the stored arguments and the events have the secrets replaced.
      api: {
        store: outlets.store,
        emit: (event) => events.emit(id, event),
        clock,
        run_id: options.runId ?? null,
        // A store that notifies wakes the waiting run at once; its look at the store is then only a fallback.
        pollMs: outlets.store.notifies ? 5_000 : 250,
      },
    },
    options.asker,
  );
  if (!resumed) {
    await store.createSession({
      id,
      job: spec.name,
      job_path: job.path,
      ...(options.parentId ? { parent_id: options.parentId } : {}),
      model: model.name,
      // Not job.env: its rendered values may hold secrets; spec.env keeps the templates (storedJob).
      config_json: JSON.stringify({
        spec,
        dir: job.dir,
        path: job.path,
        inputs: job.inputs,
        ...(job.source ? { source: job.source } : {}),
      }),
      owner: { host: me.host, pid: me.pid, started: me.started },
      labels,
    });
  }
  // A session that never started is ended, not left "running" under this process.
  started.defer(() => endUnstarted(outlets.store, id, clock.now(), log));
  // A resumed session runs again under this process; a new one was created so.
  if (resumed) {
    await store.updateSession(id, {
      status: "running",
      ended_at: null,
      owner_host: me.host,
      owner_pid: me.pid,
      owner_started: me.started,
    });
  }
  const hooks: Hooks = plugins?.hooks ?? noHooks;
  const budget = new Budget(spec.limits ?? {}, options.parentBudget);
  // Owning the session needs progress, not only a live pid: a stalled or wedged run gives it up (and stops).
  let turnRunning = () => false;
  const lease = new OwnerLease({
    store,
    sessionId: id,
    holder: me,
    clock,
    log: log.child("owner"),
    stallMs: progressBound(spec, model),
    marginMs: OWNER_MARGIN_MS,
    busy: () => turnRunning(),
  });
  started.defer(() => lease.stop());
  const unsubscribe = events.subscribe((event) => {
    if (event.session_id === id) lease.progress();
  });
  started.defer(unsubscribe);
  // Every model call of the session (turns, summaries, loop judges) reports its bytes as progress.
  const watched = reportingProgress(provider, () => lease.progress());
  const rowStore = store;
  store = ownerGuardedStore(store, lease);
  const signal = options.signal ? AbortSignal.any([options.signal, lease.signal]) : lease.signal;
  // A new session starts from its system prompt (the job's, AGENTS.md, skills, the schema's instruction): the
  // rows written here are its whole transcript, which the agent then need not read back.
  let transcript: StoredMessage[] | undefined;
  if (!options.resume) {
    // The schema's instruction (and its module) only for a job with output.schema.
    const schema = spec.output?.schema;
    const system = [
      spec.system,
      agentsMdSection(agentsMd, { untrusted }),
      skillsSection(skills, { untrusted }),
      schema ? (await import("./output_schema.ts")).schemaInstruction(schema) : undefined,
    ]
      .filter((s): s is string => s !== undefined && s !== null && s.trim() !== "").join("\n\n");
    transcript = system ? await store.appendMessages(id, [{ role: "system", content: system }]) : [];
  }
  const compactor = createCompactor({
    store,
    provider: watched,
    model: model.name,
    context_window: model.context_window,
    ...(model.max_output_tokens === undefined ? {} : { max_output_tokens: model.max_output_tokens }),
    config: spec.compaction ?? {},
    events,
    hooks,
    clock,
    log,
    identity: me,
    price: model.price,
    // Summary calls stall by the same model.idle_timeout as the agent's own calls.
    ...(model.idle_timeout_ms ? { summary_idle_timeout_ms: model.idle_timeout_ms } : {}),
    ...(spec.compaction?.summary_model ? { summary_model: spec.compaction.summary_model } : {}),
    ...(resumed ? {} : { created: id }),
  });
  const agent = new Agent({
    compactor,
    serverWindow: windowProbe.window,
    store,
    sessionId: id,
    ...(transcript ? { transcript } : {}),
    provider: watched,
    model: model.name,
    tools,
    ...(asker ? { asker: asker.ask, askerName: asker.name } : {}),
    ...(tape ? { executeTool: tape.executeTool } : {}),
    hooks,
    events,
    clock,
    log,
    budget,
    toolContext: { job_dir: job.dir, env, host_env: options.env },
    signal,
    readDedup: spec.tools?.read_file?.dedup ?? true,
    ...(job.maxSessionOutput === undefined ? {} : { maxSessionOutput: job.maxSessionOutput }),
    ...(model.max_output_tokens ? { maxOutputTokens: model.max_output_tokens } : {}),
    ...(model.temperature !== undefined ? { temperature: model.temperature } : {}),
    // The provider enforces the schema where it can (Anthropic: a forced answer tool); the instruction in the
    // system prompt and the check of the answer stay, for providers that cannot.
    ...(spec.output?.schema ? { outputSchema: { name: "final_answer", schema: spec.output.schema } } : {}),
    ...(options.onDelta ? { onDelta: (text: string) => options.onDelta!(outlets.delta(text)) } : {}),
    price: model.price,
    structuredOutput: model.structured_output,
  });

  turnRunning = () => agent.busy;

  const recurring = lazyRecurring({
    store,
    ...(resumed ? {} : { created: id }),
    clock,
    events,
    hooks,
    log: log.child("loops"),
    ...(spec.loops ? { loops: spec.loops } : {}),
    ...(spec.heartbeat ? { heartbeat: spec.heartbeat } : {}),
    judge: async (question, signal) => {
      const request = {
        model: model.name,
        messages: [{ role: "user" as const, content: question }],
        tools: [],
      };
      return (await watched.complete(request, signal ? { signal } : {})).message.content;
    },
  });
  for (const command of recurring.commands(agent)) agent.addCommand(command);
  for (const command of plugins?.commands() ?? []) agent.addCommand(command);
  let instructions: string[] = agentsMd.map((file) => file.path);
  if (!options.resume) {
    if (instructions.length) await store.setState(id, INSTRUCTIONS_KEY, instructions);
  } else {
    instructions = await store.getState<string[]>(id, INSTRUCTIONS_KEY) ?? [];
  }
  events.emit(id, {
    type: "session.start",
    job: spec.name,
    model: model.name,
    provider: model.provider,
    resumed: !!options.resume,
  });
  const optedOut = sandboxOptOuts(spec);
  for (const reason of optedOut) events.emit(id, { type: "sandbox", mode: "off", reason });
  // Without a memory cgroup of its own a command's memory cap is RLIMIT_DATA, which each process of its tree
  // gets anew: said once, so a reader of the run does not take the cap for the tree's.
  if (builtins.sandbox?.mode === "on" && builtins.sandbox.bwrap.cgroups.memory === null) {
    events.emit(id, { type: "sandbox", mode: "on", memory: "per_process", reason: PER_PROCESS_MEMORY });
  }
  await hooks.onSessionStart({ session_id: id });
  await lease.start();
  // Started: from here `finish` releases what assembly owned.
  started.move();

  let finished = false;
  return {
    id,
    agent,
    budget,
    model,
    provider,
    hooks,
    job,
    labels,
    recurring,
    compactor,
    plugins: plugins?.plugins ?? [],
    sandbox: optedOut.length ? "off" : builtins.sandbox?.mode ?? null,
    store,
    outlets,
    instructions,
    progress: () => lease.progress(),
    async finish(status, reason) {
      if (finished) return;
      finished = true;
      unsubscribe();
      await lease.stop();
      let owner = true;
      try {
        lease.assertOwner();
      } catch {
        owner = false;
      }
      // A run that gave the session up (stalled, taken over) leaves its row to the process that owns it now.
      if (!owner) {
        log.warn(`session ${id}: its end (${status}, ${reason}) is not recorded: another process may own it`);
      }
      // Plugins and MCP servers are stopped even when the end cannot be recorded (the store is down).
      const recorded = owner
        ? rowStore.updateSession(id, {
          status,
          terminal_reason: reason,
          ended_at: clock.now(),
          owner_pid: null,
        }).then(() => null, (error: unknown) => ({ error }))
        : Promise.resolve(null);
      const failure = await recorded;
      await tape?.close({ status, terminal_reason: reason }).catch((error) =>
        log.error(`Cannot write the cassette ${recordTo?.path}: ${errorMessage(error)}`)
      );
      await hooks.onSessionEnd({ session_id: id, status, reason }).catch((error) =>
        log.warn(`on_session_end failed: ${error}`)
      );
      events.emit(id, { type: "session.end", status, reason });
      await Promise.all([plugins?.stop(), mcp?.stop(), windowProbe.stop(), provider.close?.()]);
      if (failure) throw failure.error;
    },
  };
}

/**
 * The provider's question for its server's window, started at once. `stop` aborts it and waits until it
 * has let go of its requests; `window` never rejects (null when the probe failed, timed out or was stopped).
 */
function probeServerWindow(
  provider: Provider,
  signal: AbortSignal | undefined,
): { window: Promise<ServerWindow | null>; stop: () => Promise<void> } {
  const stopped = new AbortController();
  const window = provider.serverWindow?.({
    signal: signal ? AbortSignal.any([signal, stopped.signal]) : stopped.signal,
  }).catch(() => null) ?? Promise.resolve(null);
  return {
    window,
    stop: async () => {
      stopped.abort();
      await window;
    },
  };
}

/**
 * Where the session's cassette goes: `--record`'s path as given (the operator's choice), else the job's
 * `record:`, which like `output.file` may only name a file inside the job directory (checked now, before any
 * model call, and written without following symlinks).
 */
function cassetteWriter(
  flag: string | undefined,
  job: ResolvedJob,
): { path: string; write: (text: string) => Promise<void> } | undefined {
  if (flag !== undefined) {
    const path = resolve(flag);
    return {
      path,
      write: async (text) => {
        const temporary = `${path}.${crypto.randomUUID()}.tmp`;
        await Deno.writeTextFile(temporary, text);
        await Deno.rename(temporary, path);
      },
    };
  }
  const file = job.spec.record;
  if (file === undefined) return undefined;
  const scope = pathScope("write_file", job.dir, ["."]);
  let inside = true;
  try {
    inside = candidateInScope(scope, resolve(job.dir, file), file).ok;
  } catch { /* unresolvable: the write says why */ }
  if (!inside) {
    throw new ValidationError(
      `Cannot record to "${file}" (record:): it resolves outside the job directory ${scope.jobDir}`,
    );
  }
  // The writer's module (scoped, symlink-free writes) loads when the cassette is written, at the session's end.
  return {
    path: resolve(job.dir, file),
    write: async (text) => (await import("./output_file.ts")).writeOutputFile(scope, file, text),
  };
}

/** Gives back a resumed session's claim when its assembly failed (the row keeps its status). */
async function releaseClaim(store: Store, id: string, log: Logger): Promise<void> {
  await store.updateSession(id, { owner_pid: null }).catch((error) =>
    log.warn(`session ${id}: cannot release its claim: ${errorMessage(error)}`)
  );
}

/** Ends a session whose assembly failed after its row was written: `failed`, owned by nobody. */
async function endUnstarted(store: Store, id: string, now: number, log: Logger): Promise<void> {
  await store.updateSession(id, {
    status: "failed",
    terminal_reason: "start_failed",
    ended_at: now,
    owner_pid: null,
  }).catch((error) => log.warn(`session ${id}: cannot record that it did not start: ${errorMessage(error)}`));
}

async function claim(store: Store, id: string, me: ProcessIdentity): Promise<void> {
  const claimed = await store.claimSession(id, me);
  if (claimed.claimed) return;
  const { owner } = claimed;
  throw new ValidationError(
    `Cannot resume session ${id}: it is in use by pid ${owner.pid} on ${owner.host} (started ${owner.started}); ` +
      "run it again once that process has finished",
  );
}

/** Why this job runs something outside the OS sandbox: one reason per explicit `sandbox: off`. */
function sandboxOptOuts(spec: ResolvedJob["spec"]): string[] {
  return [
    ...(spec.tools?.shell?.sandbox === "off" ? ["tools.shell.sandbox is off in the job"] : []),
    ...(spec.plugins ?? []).filter((p) => p.sandbox === "off").map((p) =>
      `plugin ${p.path} has sandbox: off`
    ),
    ...Object.entries(spec.mcp_servers ?? {}).filter(([, s]) =>
      s.command !== undefined && s.sandbox === "off"
    )
      .map(([name]) => `MCP server "${name}" has sandbox: off`),
  ];
}
