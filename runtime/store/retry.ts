/**
 * Waiting out transient store faults (a database restart, a lock held past its timeout): an operation that
 * failed with a fault its backend calls transient is tried again after a capped exponential delay with
 * jitter, until it succeeds, fails otherwise, or has been failing for longer than the budget
 * (`store.retry`). Past the budget it rejects with StoreUnavailableError (exit 1, `store_unavailable`).
 * Only operations that are safe to run again are retried: see retrying_store.ts.
 */
import type { Clock } from "../core/clock.ts";
import { errorMessage, RunError } from "../core/errors.ts";
import { DEFAULT_RETRY_MS, retryLine, type RetryNotice, seconds } from "./retry_notice.ts";
export { DEFAULT_RETRY_MS, retryLine, type RetryNotice };

/** How long and how often a failing operation is tried again. */
export interface RetryPolicy {
  /** Milliseconds an operation may keep failing before the store counts as unavailable (0: never retried). */
  budgetMs: number;
  clock: Clock;
  /** The first delay (default 100 ms); each next one doubles, up to `maxDelayMs` (default 5 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A number in [0, 1) (default Math.random): spreads the retries of many processes apart. */
  random?: () => number;
}

export interface RetryOptions {
  policy: RetryPolicy;
  /** True for a fault worth waiting out (the backend's classification). */
  transient: (error: unknown) => boolean;
  onRetry?: (notice: RetryNotice) => void;
  /** Where the store is, for the give-up message. */
  where: string;
  /** An earlier operation gave up already (the store is down): this one is tried once, and says so. */
  down?: { budgetMs: number };
}

/** The store could not be reached, or stayed locked, for longer than `store.retry`. */
export class StoreUnavailableError extends RunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { reason: "store_unavailable", ...options });
    this.name = "StoreUnavailableError";
  }
}

/** The delay before retry `attempt` (1-based): half fixed, half random, so retries spread but still wait. */
export function backoffDelay(attempt: number, policy: RetryPolicy): number {
  const cap = Math.min(policy.maxDelayMs ?? 5_000, (policy.baseDelayMs ?? 100) * 2 ** (attempt - 1));
  return Math.round(cap / 2 + (policy.random ?? Math.random)() * cap / 2);
}

/** Runs `fn`, trying it again on transient faults as `options.policy` allows. */
export async function withRetry<T>(
  operation: string,
  fn: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const { policy } = options;
  let firstFailure: number | undefined;
  for (let attempt = 1;; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof StoreUnavailableError || !options.transient(error)) throw error;
      const now = policy.clock.now();
      firstFailure ??= now;
      const elapsed = now - firstFailure;
      const delay = Math.min(backoffDelay(attempt, policy), Math.max(0, policy.budgetMs - elapsed));
      if (elapsed >= policy.budgetMs || delay <= 0) {
        const why = options.down
          ? `still unavailable since an earlier operation waited out store.retry (${
            seconds(options.down.budgetMs)
          })`
          : `still failing after ${seconds(elapsed)}, ${attempt} attempt${
            attempt === 1 ? "" : "s"
          }; store.retry is ${seconds(policy.budgetMs)}`;
        throw new StoreUnavailableError(
          `Cannot use the store ${options.where}: ${oneLine(error)} (${why})`,
          {
            cause: error,
          },
        );
      }
      options.onRetry?.({
        operation,
        attempt,
        delay_ms: delay,
        elapsed_ms: elapsed,
        budget_ms: policy.budgetMs,
        error: oneLine(error),
      });
      await policy.clock.sleep(delay);
    }
  }
}

function oneLine(error: unknown): string {
  return errorMessage(error).replace(/\s*\n\s*/g, " ");
}
