/**
 * Stalls are faults: work that stops making progress must end, not hang. One watch serves every model call
 * (the provider touches it on each byte received) and every summary call (touched on each streamed piece):
 * an idle bound, reset by `touch`, and a ceiling that progress does not reset. Either aborts `signal` with a
 * StallError, whose reason `stalled` ends a run with exit 1.
 */
import type { Clock } from "./clock.ts";
import { RunError } from "./errors.ts";

export class StallError extends RunError {
  /** `idle`: nothing arrived for the idle bound; `ceiling`: the work outlived its ceiling. */
  readonly kind: "idle" | "ceiling";
  constructor(message: string, kind: "idle" | "ceiling") {
    super(message, { reason: "stalled" });
    this.name = "StallError";
    this.kind = kind;
  }
}

export interface StallWatchOptions {
  /** No `touch` for this long aborts with an `idle` StallError (omit: no idle bound). */
  idleMs?: number;
  /** The whole work may not take longer than this (omit: no ceiling). */
  ceilingMs?: number;
  /** The messages of the two StallErrors. */
  idleMessage?: (ms: number) => string;
  ceilingMessage?: (ms: number) => string;
}

export interface StallWatch {
  /** Aborts with a StallError when the work stalls. */
  readonly signal: AbortSignal;
  /** Progress: the idle bound starts again. */
  touch(): void;
  /** Ends the watch; resolves once its timers are gone. */
  stop(): Promise<void>;
}

const ignore = () => {};

export function watchStall(clock: Clock, options: StallWatchOptions): StallWatch {
  const controller = new AbortController();
  const timers = new AbortController();
  let lastActivity = clock.now();
  const { idleMs, ceilingMs } = options;
  const ceiling = ceilingMs === undefined ? Promise.resolve() : clock.sleep(ceilingMs, timers.signal).then(
    () =>
      controller.abort(
        new StallError(options.ceilingMessage?.(ceilingMs) ?? `no result within ${ceilingMs} ms`, "ceiling"),
      ),
    ignore,
  );
  const idle = idleMs === undefined ? Promise.resolve() : (async () => {
    while (!timers.signal.aborted && !controller.signal.aborted) {
      const wait = lastActivity + idleMs - clock.now();
      if (wait <= 0) {
        controller.abort(
          new StallError(options.idleMessage?.(idleMs) ?? `nothing happened for ${idleMs} ms`, "idle"),
        );
        return;
      }
      await clock.sleep(wait, timers.signal).catch(ignore);
    }
  })();
  return {
    signal: controller.signal,
    touch: () => {
      lastActivity = clock.now();
    },
    stop: async () => {
      timers.abort();
      await Promise.all([ceiling, idle]);
    },
  };
}
