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
import { type Clock, systemClock } from "../core/clock.ts";
import { formatDuration } from "../core/duration.ts";
import { StallError, watchStall } from "../core/stall.ts";
import { type FailureKind, isRetryable, retryDelayMs } from "./overload.ts";
import { type CompleteOptions, ProviderError } from "./provider.ts";
import { CALL_DEFAULTS } from "./model.ts";

/** The bounds of one model call as a provider's options give them; absent ones take the defaults below. */
export interface CallBoundOptions {
  clock?: Clock;
  /** Longest silence of the server, after the request or between bytes of the reply (`model.idle_timeout`). */
  idleTimeoutMs?: number;
  /** Ceiling of the whole call, retries and their waits included (`model.request_timeout`). */
  ceilingMs?: number;
  /** Retries after the first attempt (`model.max_retries`). */
  maxRetries?: number;
  /** First backoff delay, doubled per retry. */
  retryBaseMs?: number;
}

/** Every provider's call bounds, with one set of defaults; `sdkTimeoutMs` only backs ours up. */
export function callDefaults(
  options: CallBoundOptions,
): Required<CallBoundOptions> & { sdkTimeoutMs: number } {
  const idleTimeoutMs = options.idleTimeoutMs ?? CALL_DEFAULTS.idleTimeoutMs;
  const ceilingMs = options.ceilingMs ?? CALL_DEFAULTS.ceilingMs;
  return {
    clock: options.clock ?? systemClock,
    idleTimeoutMs,
    ceilingMs,
    maxRetries: options.maxRetries ?? CALL_DEFAULTS.maxRetries,
    retryBaseMs: options.retryBaseMs ?? CALL_DEFAULTS.retryBaseMs,
    // The SDK's own timeout never fires first: the idle watch and the ceiling above name what happened.
    sdkTimeoutMs: Math.max(idleTimeoutMs, ceilingMs) + 60_000,
  };
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  529: "Overloaded",
};

/** `HTTP 429 Too Many Requests` (the reason phrase when known), or "" without a status. */
export function httpStatusLine(status: number | null): string {
  if (status === null) return "";
  return `HTTP ${status}${STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : ""}`;
}

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
