/**
 * The live sessions of one `hermes rpc` or `hermes acp` process: opened from a job (file or object) or from
 * config.yaml defaults, or resumed from the store on first use; kept in memory until closed. How turns of
 * one session are queued and cancelled: see served_session.ts.
 */
import type { Clock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import { type Hooks, noHooks } from "../core/hooks.ts";
import { mergeConfig, type ResolvedJob } from "../config/job.ts";
import { jobFromObject, loadJob } from "../config/job_file.ts";
import type { JobFile, McpServerEntry, UserConfig } from "../config/job_schema.ts";
import { type FrontEndAsker, openSession, type OpenSessionOptions, storedJob } from "./live_session.ts";
import type { Logger } from "../core/log.ts";
import { SessionBusyError } from "../store/errors.ts";
import type { CommandSource } from "../agent/slash.ts";
import type { Store } from "../store/store.ts";
import { ServedSession } from "./served_session.ts";

export type InputValue = string | number | boolean;

export interface SessionHubOptions {
  store: Store;
  events: EventBus;
  clock: Clock;
  log: Logger;
  /** The process environment snapshot. */
  env: Record<string, string>;
  /** This host's name in session owners and leases. */
  host: string;
  /** HERMES_HOME/config.yaml, already loaded. */
  config: UserConfig | undefined;
  /** Relative job paths and job-less sessions resolve against this directory. */
  cwd: string;
  source: CommandSource;
  /** Global hooks for operations on stored sessions (`on_session_delete`). */
  hooks?: Hooks;
  /** Aborts every turn (SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** Applied to plugin error text before it reaches events. */
  redact?: (text: string) => string;
  /** Streamed assistant text of a session. */
  onDelta?: (sessionId: string, text: string) => void;
  /** The front-end's approver of tool calls outside a job's allow-lists (see runtime/tools/gate.ts). */
  asker?: FrontEndAsker;
}

export interface CreateSessionParams {
  /** A job file path (relative to `cwd`) or an inline job object. */
  job?: string | Record<string, unknown>;
  inputs?: Record<string, InputValue>;
  /** Overrides the model name. */
  model?: string;
  /** A system prompt added after the job's own. */
  system?: string;
  /** More MCP servers (ACP `mcpServers`), added to the job's; an entry replaces the job's of that name. */
  mcp_servers?: Record<string, McpServerEntry>;
  /** Directory for this session (default: the hub's `cwd`). */
  cwd?: string;
}

export class SessionHub {
  readonly options: SessionHubOptions;
  #sessions = new Map<string, ServedSession>();
  #opening = new Map<string, Promise<ServedSession>>();

  constructor(options: SessionHubOptions) {
    this.options = options;
  }

  get hooks(): Hooks {
    return this.options.hooks ?? noHooks;
  }

  /** Sessions open in this process. */
  list(): ServedSession[] {
    return [...this.#sessions.values()];
  }

  /** Resolves a job given as a path or an object; a bad job is a ValidationError. */
  resolveJob(params: Pick<CreateSessionParams, "job" | "inputs" | "cwd">, name: string): ResolvedJob {
    const { env, config } = this.options;
    const cwd = params.cwd ?? this.options.cwd;
    const inputs = Object.fromEntries(Object.entries(params.inputs ?? {}).map(([k, v]) => [k, String(v)]));
    const options = { inputs, env, ...(config ? { config } : {}) };
    if (typeof params.job === "string") {
      return loadJob(params.job.startsWith("/") ? params.job : `${cwd}/${params.job}`, options);
    }
    if (params.job !== undefined) return jobFromObject(params.job, cwd, options);
    if (params.inputs && Object.keys(params.inputs).length > 0) {
      throw new ValidationError(`Invalid inputs: without a job there are no inputs to set`);
    }
    return jobFromObject(mergeConfig({ name } as JobFile, config), cwd, { env });
  }

  async create(params: CreateSessionParams): Promise<ServedSession> {
    let job = this.resolveJob(params, this.options.source);
    if (params.system !== undefined && params.system.trim() !== "") {
      const system = job.spec.system ? `${job.spec.system}\n\n${params.system}` : params.system;
      job = { ...job, spec: { ...job.spec, system } };
    }
    if (params.mcp_servers && Object.keys(params.mcp_servers).length) {
      job = {
        ...job,
        spec: { ...job.spec, mcp_servers: { ...job.spec.mcp_servers, ...params.mcp_servers } },
      };
    }
    return await this.#open(job, { ...(params.model !== undefined ? { model: params.model } : {}) });
  }

  /** A session open here, or the stored session `ref` (id, prefix, `latest`) opened now. */
  async open(ref: string): Promise<ServedSession> {
    const open = this.#sessions.get(ref);
    if (open) return open;
    const { store } = this.options;
    const id = await store.resolveSessionId(ref);
    const known = this.#sessions.get(id) ?? await this.#opening.get(id);
    if (known) return known;
    const busy = await store.findBusySessions([id]);
    if (busy.length > 0) throw new SessionBusyError("open the session", busy);
    const opening = this.#open(await storedJob(store, id, { env: this.options.env }), { resume: id });
    this.#opening.set(id, opening);
    try {
      return await opening;
    } finally {
      this.#opening.delete(id);
    }
  }

  /** The session with this (resolved) id, if it is open here. */
  find(id: string): ServedSession | undefined {
    return this.#sessions.get(id);
  }

  async #open(job: ResolvedJob, extra: { resume?: string; model?: string }): Promise<ServedSession> {
    const { store, events, clock, log, env, host } = this.options;
    const bound: { id?: string } = {}; // onDelta may fire only once the session id is known
    const onDelta = this.options.onDelta;
    const lifetime = new AbortController();
    const options: OpenSessionOptions = {
      job,
      store,
      events,
      clock,
      log,
      env,
      host,
      signal: AbortSignal.any([lifetime.signal, ...(this.options.signal ? [this.options.signal] : [])]),
      ...extra,
      ...(onDelta ? { onDelta: (text: string) => bound.id !== undefined && onDelta(bound.id, text) } : {}),
      ...(this.options.redact ? { redact: this.options.redact } : {}),
    };
    if (this.options.asker) options.asker = this.options.asker;
    const live = await openSession(options);
    bound.id = live.id;
    const session = new ServedSession(live, lifetime, {
      store,
      events,
      clock,
      log,
      source: this.options.source,
      ...(this.options.signal ? { interrupt: this.options.signal } : {}),
    });
    await store.updateSession(live.id, { status: "idle" });
    this.#sessions.set(live.id, session);
    return session;
  }

  /** Closes one session (finishes it in the store); a no-op for sessions not open here. */
  async close(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    await session.close();
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map((s) => s.close()));
  }
}
