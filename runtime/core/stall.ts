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

/**
 * The items of `stream` until `signal` aborts, also while none comes: the SDK's aborted fetch does not always
 * end the read of a reply it already has (after a garbage collection the abort can miss the body), and a
 * server's SSE comments (keep-alives) yield no item at which to look at the signal, so a request_timeout
 * or a cancel would otherwise wait for a reply that never ends. The read left pending is not awaited.
 */
export async function* untilAborted<T>(stream: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = stream[Symbol.asyncIterator]();
  const { promise: aborted, reject } = Promise.withResolvers<never>();
  const fail = () => reject(signal.reason);
  if (signal.aborted) fail();
  else signal.addEventListener("abort", fail, { once: true });
  aborted.catch(() => {});
  try {
    while (true) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    signal.removeEventListener("abort", fail);
    if (signal.aborted) iterator.return?.().catch(() => {});
    else await iterator.return?.();
  }
}
