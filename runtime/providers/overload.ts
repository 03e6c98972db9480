/**
 * One policy for a failed model call, shared by every HTTP provider: what kind of failure an HTTP status (and
 * the error code that came with it) is, whether and how long to wait before trying again, and the server's
 * `retry-after-ms` / `retry-after` (seconds or an HTTP date) honoured up to a cap.
 *
 * - `quota`: a 429 that says the account is out of credit (`insufficient_quota`, billing). Waiting does not
 *   help, so it is never retried.
 * - `rate_limit`: any other 429. Retried after the server's retry-after, else with backoff.
 * - `overload`: 529 (Anthropic) and 503. Retried with backoff (or the server's retry-after); when the retries
 *   run out, `model.fallback` names the next model to try.
 * - `transient`: 408, 409, other 5xx, a dropped connection, a timeout. Retried.
 * - `fatal`: everything else (400, 401, 404, …). Not retried.
 *
 * A provider retries only before the reply's text began to stream: text handed on cannot be taken back, and
 * since tools run only after a whole reply, no tool side effect ever repeats.
 */

export type FailureKind = "quota" | "rate_limit" | "overload" | "transient" | "fatal";

/** The longest a server's retry-after is waited for. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** The longest backoff between two attempts when the server names no wait. */
export const MAX_BACKOFF_MS = 8_000;

const QUOTA = /insufficient_quota|quota_exceeded|billing/i;

/** The kind of failure an HTTP status stands for; `code` is the error's code or type text, if any. */
export function failureKind(status: number | null, code = ""): FailureKind {
  if (status === null) return "transient";
  if (status === 429) return QUOTA.test(code) ? "quota" : "rate_limit";
  if (status === 529 || status === 503) return "overload";
  if (status === 408 || status === 409 || status >= 500) return "transient";
  return "fatal";
}

/** Worth another attempt: not out of credit, not a request the server will refuse again. */
export function isRetryable(kind: FailureKind): boolean {
  return kind !== "quota" && kind !== "fatal";
}

/** The server turned the call away for load or limits: the run ends `rate_limited`, and a fallback may help. */
export function isRateLimited(kind: FailureKind | null): boolean {
  return kind === "quota" || kind === "rate_limit" || kind === "overload";
}

/** A `model.fallback` model is tried when the server is overloaded or rate-limits the request, not on quota. */
export function isFallbackFailure(kind: FailureKind | null): boolean {
  return kind === "rate_limit" || kind === "overload";
}

/** Reads `retry-after-ms`, else `retry-after` as seconds or an HTTP date; capped at `capMs`. */
export function retryAfterMs(
  headers: Headers | undefined,
  now: number,
  capMs = MAX_RETRY_AFTER_MS,
): number | undefined {
  const ms = Number(headers?.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, capMs);
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  const delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(delay)) return undefined;
  return Math.min(Math.max(0, Math.round(delay)), capMs);
}

/**
 * The wait before retry number `retry` (1 for the first): the server's retry-after when it sent one, else
 * exponential backoff from `baseMs` with up to 25 % jitter below it, so clients do not retry in step.
 */
export function retryDelayMs(retry: number, options: { baseMs: number; retryAfterMs?: number | undefined }) {
  if (options.retryAfterMs !== undefined) return options.retryAfterMs;
  const nominal = Math.min(options.baseMs * 2 ** (retry - 1), MAX_BACKOFF_MS);
  return Math.round(nominal * (1 - Math.random() * 0.25));
}
