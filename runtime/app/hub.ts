/**
 * The live sessions of one App (one `hermes rpc` or `hermes acp` process): opened from a resolved job or
 * resumed from the store on first use, kept in memory until closed. How turns of one session are queued and
 * cancelled: see session/served_session.ts.
 */
import type { ResolvedJob } from "../config/job.ts";
import { type FrontEndAsker, openSession, type OpenSessionOptions } from "../session/live_session.ts";
import { admittedStoredJob } from "./stored_job.ts";
import { SessionBusyError } from "../store/errors.ts";
import { ServedSession } from "../session/served_session.ts";
import type { AppContext } from "./context.ts";
import { type OpenSession, openSessionView } from "./open_session.ts";

export interface SessionHubOptions {
  /** Streamed assistant text of a session. */
  onDelta?: (sessionId: string, text: string) => void;
  /** The front-end's approver of tool calls outside a job's allow-lists (see runtime/tools/gate.ts). */
  asker?: FrontEndAsker;
}

export class SessionHub {
  #context: AppContext;
  #options: SessionHubOptions;
  #sessions = new Map<string, ServedSession>();
  #opening = new Map<string, Promise<ServedSession>>();

  constructor(context: AppContext, options: SessionHubOptions = {}) {
    this.#context = context;
    this.#options = options;
  }

  /** What a front-end sees of a session open here; the App hands out this, never the session. */
  view(served: ServedSession): OpenSession {
    return openSessionView(served);
  }

  /** Sessions open here. */
  list(): ServedSession[] {
    return [...this.#sessions.values()];
  }

  /** The session with this (resolved) id, if it is open here. */
  find(id: string): ServedSession | undefined {
    return this.#sessions.get(id);
  }

  /** Opens a new session of `job`. */
  create(job: ResolvedJob, options: { model?: string } = {}): Promise<ServedSession> {
    return this.#open(job, options);
  }

  /** A session open here, or the stored session `ref` (id, prefix, `latest`) opened now. */
  async open(ref: string): Promise<ServedSession> {
    const open = this.#sessions.get(ref);
    if (open) return open;
    const { store } = this.#context;
    const id = await store.resolveSessionId(ref);
    const known = this.#sessions.get(id) ?? await this.#opening.get(id);
    if (known) return known;
    const busy = await store.findBusySessions([id]);
    if (busy.length > 0) throw new SessionBusyError("open the session", busy);
    // Held to the policy in force now, as a new job would be, before any model call.
    const job = await admittedStoredJob(this.#context, id);
    const opening = this.#open(job, { resume: id });
    this.#opening.set(id, opening);
    try {
      return await opening;
    } finally {
      this.#opening.delete(id);
    }
  }

  async #open(job: ResolvedJob, extra: { resume?: string; model?: string }): Promise<ServedSession> {
    const { store, events, clock, log, env, host, signal, source, providers } = this.#context;
    const bound: { id?: string } = {}; // onDelta may fire only once the session id is known
    const { onDelta, asker } = this.#options;
    const lifetime = new AbortController();
    const options: OpenSessionOptions = {
      job,
      store,
      events,
      clock,
      log,
      env,
      host,
      signal: AbortSignal.any([lifetime.signal, ...(signal ? [signal] : [])]),
      ...(providers ? { providers } : {}),
      ...extra,
      ...(onDelta ? { onDelta: (text: string) => bound.id !== undefined && onDelta(bound.id, text) } : {}),
      ...(asker ? { asker } : {}),
    };
    const live = await openSession(options);
    bound.id = live.id;
    const session = new ServedSession(live, lifetime, {
      store,
      events,
      clock,
      log,
      source,
      ...(signal ? { interrupt: signal } : {}),
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
