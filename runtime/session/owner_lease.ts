/**
 * A session's ownership needs progress, not only a live pid. The owning process renews `owner_expires_at`
 * while it is healthy: on a timer while the session is idle (nothing is supposed to happen), and during a turn
 * only after progress (bytes from the model, an event: a tool finished, a message stored). Another process may
 * claim the session once that expiry has passed (`claimable` in store/rules.ts), so a wedged process — stopped,
 * its event loop blocked — does not look alive to `--resume` or the daemon. To keep one process at a time, the
 * owner stops itself first: a turn without progress for `stallMs` ends `stalled`, and once its renewal is overdue
 * (or another process took the session) it writes nothing more. The taker waits `marginMs` longer than that.
 */
import type { Clock } from "../core/clock.ts";
import { formatDuration, parseDuration } from "../core/duration.ts";
import type { JobFile } from "../config/job_schema.ts";
import { errorMessage } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { ProcessIdentity } from "../core/process_identity.ts";
import { StallError } from "../core/stall.ts";
import type { Store } from "../store/store.ts";
import { CALL_DEFAULTS } from "../providers/model.ts";

export interface OwnerLeaseOptions {
  store: Store;
  sessionId: string;
  holder: ProcessIdentity;
  clock: Clock;
  log: Logger;
  /** The longest a turn may go without progress: every bound of its model calls, tools and hooks, plus slack. */
  stallMs: number;
  /** How much later than the owner stops writing another process may take the session. */
  marginMs: number;
  /** True while a turn runs (progress is then required for renewal). */
  busy: () => boolean;
}

export class OwnerLease {
  #o: OwnerLeaseOptions;
  #controller = new AbortController();
  #timers = new AbortController();
  #lastProgress: number;
  /** When the expiry now stored was written (the owner writes nothing once `stallMs` past it). */
  #renewedAt: number;
  #renewing: Promise<void> | null = null;
  #loop: Promise<void> = Promise.resolve();
  /** A renewal is written at most this often (well inside `stallMs`). */
  #renewEvery: number;

  constructor(options: OwnerLeaseOptions) {
    this.#o = options;
    this.#lastProgress = this.#renewedAt = options.clock.now();
    this.#renewEvery = Math.min(30_000, Math.floor(options.stallMs / 3));
  }

  /** Aborts with a StallError when a turn made no progress for `stallMs`, or the session was taken over. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The expiry to store with a renewal at `now`. */
  expiresAt(now: number): number {
    return now + this.#o.stallMs + this.#o.marginMs;
  }

  /** Writes the first expiry and starts renewing. */
  async start(): Promise<void> {
    await this.#renew(this.#o.clock.now());
    const tick = Math.max(10, Math.min(5_000, Math.floor(this.#renewEvery / 2)));
    this.#loop = (async () => {
      while (!this.#timers.signal.aborted) {
        await this.#o.clock.sleep(tick, this.#timers.signal).catch(() => {});
        if (this.#timers.signal.aborted) return;
        this.#check(this.#o.clock.now());
      }
    })();
  }

  /** The session made progress. */
  progress(): void {
    this.#lastProgress = this.#o.clock.now();
  }

  /** Throws when this process must not write to the session any more: taken over, or its renewal overdue. */
  assertOwner(): void {
    if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
    const now = this.#o.clock.now();
    if (now - this.#renewedAt > this.#o.stallMs) {
      this.#stop(
        new StallError(
          `Cannot write to session ${this.#o.sessionId}: this process made no renewal for ${
            formatDuration(now - this.#renewedAt)
          } (more than ${formatDuration(this.#o.stallMs)}); another process may own it now`,
          "idle",
        ),
      );
      throw this.#controller.signal.reason;
    }
  }

  /** True once this process stopped owning the session (its ending must not be written over the taker's). */
  get lost(): boolean {
    return this.#controller.signal.aborted;
  }

  async stop(): Promise<void> {
    this.#timers.abort();
    await this.#loop;
    await this.#renewing;
  }

  #check(now: number): void {
    if (this.lost) return;
    const busy = this.#o.busy();
    if (busy && now - this.#lastProgress > this.#o.stallMs) {
      this.#stop(
        new StallError(
          `Stopped: the run made no progress for ${formatDuration(now - this.#lastProgress)} (more than ${
            formatDuration(this.#o.stallMs)
          }, every bound of its model calls, tools and hooks)`,
          "idle",
        ),
      );
      return;
    }
    if (now - this.#renewedAt > this.#o.stallMs) {
      // Woken after a wedge (or the store refused renewals that long): another process may run it by now.
      this.#stop(
        new StallError(
          `Stopped: the ownership of session ${this.#o.sessionId} was not renewed for ${
            formatDuration(now - this.#renewedAt)
          }, so another process may have taken it over`,
          "idle",
        ),
      );
      return;
    }
    const due = now - this.#renewedAt >= this.#renewEvery;
    if (due && (!busy || this.#lastProgress > this.#renewedAt) && !this.#renewing) {
      this.#renewing = this.#renew(now).finally(() => this.#renewing = null);
    }
  }

  async #renew(now: number): Promise<void> {
    try {
      const held = await this.#o.store.renewOwner(this.#o.sessionId, this.#o.holder, this.expiresAt(now));
      if (held) {
        this.#renewedAt = now;
        return;
      }
      this.#stop(
        new StallError(`Stopped: session ${this.#o.sessionId} was taken over by another process`, "idle"),
      );
    } catch (error) {
      // A store blip is not a stall: the next tick tries again, and the expiry still covers the gap.
      this.#o.log.warn(`cannot renew the ownership of session ${this.#o.sessionId}: ${errorMessage(error)}`);
    }
  }

  #stop(reason: StallError): void {
    if (this.lost) return;
    this.#o.log.warn(reason.message);
    this.#controller.abort(reason);
  }
}

/** Slack over the longest bound of a turn's steps: the store, events and hooks between them. */
const SLACK_MS = 5_000;
/** How much longer than the owner another process waits: the last write in flight, clocks of other hosts. */
export const OWNER_MARGIN_MS = 10_000;

/**
 * The longest a turn may legitimately go without progress: the longest single bound of its model calls and
 * tools (each of them ends by its own bound), plus every plugin's hook bound (hooks run in turn), plus slack.
 */
export function progressBound(
  spec: Pick<JobFile, "tools" | "plugins" | "mcp_servers">,
  model: { idle_timeout_ms?: number },
): number {
  const bound = (value: string | undefined, fallback: string) => parseDuration(value ?? fallback);
  const single = [model.idle_timeout_ms ?? CALL_DEFAULTS.idleTimeoutMs];
  if (spec.tools?.shell) single.push(bound(spec.tools.shell.timeout, "60s"));
  if (spec.tools?.http_fetch) single.push(bound(spec.tools.http_fetch.timeout, "30s"));
  for (const server of Object.values(spec.mcp_servers ?? {})) single.push(bound(server.timeout, "60s"));
  const hooks = (spec.plugins ?? []).reduce((sum, plugin) => sum + bound(plugin.hook_timeout, "30s"), 0);
  return Math.max(...single) + hooks + SLACK_MS;
}

/** The session's writes go through this view: none once the owner must stop (runs `assertOwner` first). */
export function ownerGuardedStore(store: Store, lease: OwnerLease): Store {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function" || !GUARDED.has(property)) return value;
      return (...args: unknown[]) => {
        try {
          lease.assertOwner();
        } catch (error) {
          return Promise.reject(error);
        }
        return value.apply(target, args);
      };
    },
  });
}

/** The writes that change a session's transcript, progress or ending. */
const GUARDED = new Set<PropertyKey>([
  "appendMessages",
  "updateSession",
  "addUsage",
  "setState",
  "deleteState",
  "startStep",
  "sendStep",
  "finishStep",
  "commitCompaction",
  "acquireLease",
]);
