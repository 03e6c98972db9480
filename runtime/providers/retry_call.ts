/**
 * One model call with its bounds, the same for every HTTP provider: the whole-call ceiling
 * (`model.request_timeout`, retries and their waits included), retries of failed attempts as the provider's
 * judge and overload.ts classify them, and the errors a caller sees (a stall named with where it happened, a
 * {@linkcode ProviderError} otherwise). Each provider keeps only what is its own: one attempt, and how its
 * SDK's errors are judged.
 *
 * An attempt is retried only before its reply text began to stream: text handed to `onDelta` cannot be taken
 * back, and since tools run only after a whole reply, no tool side effect ever repeats.
 */
import type { Clock } from "../core/clock.ts";
import { formatDuration } from "../core/duration.ts";
import { StallError, watchStall } from "../core/stall.ts";
import { type FailureKind, isRetryable, retryDelayMs } from "./overload.ts";
import { type CompleteOptions, ProviderError } from "./provider.ts";

/** How one failed attempt is judged. `detail` is one redacted line. */
export interface Failure {
  status: number | null;
  detail: string;
  kind: FailureKind;
  contextOverflow: boolean;
  /** The context limit the error message named, when it is an overflow that names one. */
  contextLimit: number | null;
  /** The server's retry-after, when it sent one. */
  retryAfterMs?: number;
}

/** The callbacks one attempt gets: the caller's, with `onDelta` watched for streamed text. */
export type AttemptCallbacks = Pick<CompleteOptions, "onDelta" | "onProgress" | "onOutput">;

export interface RetryCallOptions {
  /** `Cannot complete model call to URL`: the head of every error the call raises. */
  where: string;
  clock: Clock;
  ceilingMs: number;
  maxRetries: number;
  retryBaseMs: number;
  judge: (error: unknown, now: number) => Failure;
}

/** Runs `attempt` until it answers, a failure is final, the retries run out or the ceiling passes. */
export async function retryCall<T>(
  attempt: (signal: AbortSignal, callbacks: AttemptCallbacks) => Promise<T>,
  callOptions: CompleteOptions,
  options: RetryCallOptions,
): Promise<T> {
  const { signal, onRetry, onDelta, onProgress, onOutput } = callOptions;
  const { where, clock } = options;
  const ceiling = watchStall(clock, {
    ceilingMs: options.ceilingMs,
    ceilingMessage: (ms) => `no complete answer within ${formatDuration(ms)} (model.request_timeout)`,
  });
  const callSignal = signal ? AbortSignal.any([signal, ceiling.signal]) : ceiling.signal;
  try {
    for (let retries = 0;; retries++) {
      callSignal.throwIfAborted();
      let streamed = false;
      const forwardDelta = onDelta &&
        ((text: string) => {
          streamed = true;
          onDelta(text);
        });
      try {
        return await attempt(callSignal, {
          ...(forwardDelta ? { onDelta: forwardDelta } : {}),
          ...(onProgress ? { onProgress } : {}),
          ...(onOutput ? { onOutput } : {}),
        });
      } catch (error) {
        if (callSignal.aborted) throw callSignal.reason;
        if (error instanceof StallError) throw error;
        const failure = options.judge(error, clock.now());
        if (
          failure.contextOverflow || !isRetryable(failure.kind) || retries >= options.maxRetries || streamed
        ) {
          throw failureError(where, failure, retries);
        }
        const delay = retryDelayMs(retries + 1, {
          baseMs: options.retryBaseMs,
          retryAfterMs: failure.retryAfterMs,
        });
        onRetry?.({ attempt: retries + 1, delay_ms: delay, status: failure.status, error: failure.detail });
        await clock.sleep(delay, callSignal);
      }
    }
  } catch (error) {
    // A stall ends the call at once, named with where it happened; the caller's own abort stays as it is.
    if (!signal?.aborted && error instanceof StallError) {
      throw new StallError(`${where}: ${error.message}`, error.kind);
    }
    throw error;
  } finally {
    await ceiling.stop();
  }
}

/** The error a final failure ends the call with, after `retries` retries. */
export function failureError(where: string, failure: Failure, retries: number): ProviderError {
  if (failure.contextOverflow) {
    return new ProviderError(`${where}: the prompt is too long for the model's context (${failure.detail})`, {
      status: failure.status,
      contextOverflow: true,
      contextLimit: failure.contextLimit,
    });
  }
  const after = retries === 0 ? "" : ` after ${retries} ${retries === 1 ? "retry" : "retries"}`;
  const quota = failure.kind === "quota" ? " (quota exhausted: not retried)" : "";
  return new ProviderError(`${where}: ${failure.detail}${after}${quota}`, {
    status: failure.status,
    kind: failure.kind,
  });
}
