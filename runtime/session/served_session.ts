/**
 * One live session held by a SessionHub.
 *
 * Turns of one session are **queued** (FIFO): a second prompt waits for the first instead of failing. Slash
 * commands are not queued behind prompts (`/status` answers at once; a command that runs a turn, like
 * `/loop`, waits inside the agent, which serialises turns). `cancel` stops the running turn at a safe point
 * and every queued one. An active `/loop` or `/heartbeat` is driven in the background while the session is
 * open, so its events keep flowing.
 */
import { parseSlash } from "../agent/slash.ts";
import type { LiveSession } from "./live_session.ts";
import type { SessionStatus } from "../core/types.ts";
import { runTurn, type TurnOptions, type TurnOutcome } from "./turn.ts";

/**
 * What a session's turns need from the process: store, events, clock, log, the command source and the
 * server's interrupt (SIGINT/SIGTERM).
 */
export type ServedSessionContext = Pick<
  TurnOptions,
  "store" | "events" | "clock" | "log" | "source" | "interrupt"
>;

export class ServedSession {
  readonly live: LiveSession;
  /** Aborted when the session is closed: stops its turns and its loop driver. */
  readonly lifetime: AbortController;
  #context: ServedSessionContext;
  #cancels = new Set<AbortController>();
  #queue: Promise<unknown> = Promise.resolve();
  #driving: Promise<void> | null = null;
  #last: { status: SessionStatus; reason: string } | undefined;

  constructor(live: LiveSession, lifetime: AbortController, context: ServedSessionContext) {
    this.live = live;
    this.lifetime = lifetime;
    this.#context = context;
  }

  get id(): string {
    return this.live.id;
  }

  /** A turn is running or queued (or a command is running). */
  get busy(): boolean {
    return this.#cancels.size > 0 || this.live.agent.busy;
  }

  /**
   * Queues a prompt (or a slash command) behind the session's other prompts. A prompt's answer is checked
   * against the job's `output.schema` (a command's output is not an answer).
   */
  prompt(text: string): Promise<TurnOutcome> {
    const cancel = this.#cancellable();
    const schema = parseSlash(text) ? undefined : this.live.job.spec.output?.schema;
    const run = this.#queue.then(() => this.#run(text, cancel, schema));
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Runs a slash command now (it does not wait for queued prompts). */
  command(text: string): Promise<TurnOutcome> {
    return this.#run(text, this.#cancellable());
  }

  /** Registered at once, so a cancel that arrives while the turn is still queued stops it too. */
  #cancellable(): AbortController {
    const cancel = new AbortController();
    this.#cancels.add(cancel);
    return cancel;
  }

  /** Cancels the running turn and every queued one; returns how many were stopped. */
  cancel(): number {
    const count = this.#cancels.size;
    for (const controller of this.#cancels) controller.abort(new DOMException("cancelled", "AbortError"));
    return count;
  }

  async #run(text: string, cancel: AbortController, schema?: Record<string, unknown>): Promise<TurnOutcome> {
    const { store, log, interrupt } = this.#context;
    try {
      await store.updateSession(this.id, { status: "running" });
      const outcome = await runTurn(this.live, text, {
        ...this.#context,
        cancel: cancel.signal,
        interrupt: AbortSignal.any([this.lifetime.signal, ...(interrupt ? [interrupt] : [])]),
        interrupted: "server",
        ...(schema ? { schema } : {}),
      });
      if (outcome.refused) throw outcome.refused;
      this.#last = { status: outcome.result.status, reason: outcome.result.terminal_reason };
      return outcome;
    } finally {
      this.#cancels.delete(cancel);
      if (this.#cancels.size === 0 && !this.lifetime.signal.aborted) {
        await store.updateSession(this.id, { status: "idle" });
      }
      this.#drive().catch((error) => log.warn(`session ${this.id}: cannot drive recurring work: ${error}`));
    }
  }

  /** Starts the loop/heartbeat driver when the session has active recurring work and none is running. */
  async #drive(): Promise<void> {
    const recurring = this.live.recurring;
    const canDrive = () => !this.#driving && !this.lifetime.signal.aborted;
    // Checked again after the store read: a turn or close() may have come in meanwhile.
    if (!canDrive() || !(await recurring.isActive(this.id)) || !canDrive()) return;
    const log = this.#context.log;
    this.#driving = recurring.drive(this.live.agent, { signal: this.lifetime.signal })
      .then((end) => log.debug(`session ${this.id}: recurring work ended (${end.reason})`))
      .catch((error) => {
        if (!this.lifetime.signal.aborted) log.warn(`session ${this.id}: recurring work stopped: ${error}`);
      })
      .finally(() => {
        this.#driving = null;
      });
  }

  /** Stops everything and records the session's end; idempotent. */
  async close(): Promise<void> {
    if (this.lifetime.signal.aborted) return;
    this.lifetime.abort(new DOMException("session closed", "AbortError"));
    await this.#queue;
    await this.#driving;
    const last = this.#last ?? { status: "idle" as const, reason: "closed" };
    await this.live.finish(last.status, last.reason);
  }
}
