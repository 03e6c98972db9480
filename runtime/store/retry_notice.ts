/**
 * What a store retry tells (the notice, its stderr line) and the default budget: split from retry.ts, so the
 * CLI's start-up (main.ts, commands/_cli.ts) does not load the retry loop until it opens a store.
 */
/** One retry about to happen, as `store.retry` events and the stderr line report it. */
export interface RetryNotice {
  /** The store operation, e.g. `appendMessages`. */
  operation: string;
  /** 1 for the first retry. */
  attempt: number;
  delay_ms: number;
  /** Milliseconds since the operation first failed. */
  elapsed_ms: number;
  budget_ms: number;
  error: string;
}

export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}

/** The stderr line of a retry. */
export function retryLine(notice: RetryNotice): string {
  return `store unavailable (${notice.error}); retrying ${notice.operation} in ${
    seconds(notice.delay_ms)
  } (attempt ${notice.attempt}, ${seconds(notice.elapsed_ms)} of store.retry ${seconds(notice.budget_ms)})`;
}

export const DEFAULT_RETRY_MS = 60_000;
