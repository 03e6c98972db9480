/**
 * The store boundary of fault tolerance: a view of a store whose every operation waits out the faults its
 * backend calls transient (retry.ts), so a database restart is a few `store.retry` notices, not a failed
 * run. Every method is covered, not a list: an operation added later is retried too.
 *
 * Running an operation again is safe because each backend makes a failed one leave nothing behind, or
 * tells what it left: a SQLite operation is synchronous and rolls back whatever failed; a PostgreSQL write
 * runs in one transaction whose outcome is known even when its COMMIT acknowledgement was lost (the
 * backend asks the server, postgres/_db.ts), or is a statement that does the same thing run twice
 * (an upsert, setting columns, a delete by key). So a retried append stores its messages once, in order.
 */
import type { Store } from "./store.ts";
import { type RetryNotice, type RetryPolicy, StoreUnavailableError, withRetry } from "./retry.ts";

export interface RetryingOptions {
  policy: RetryPolicy;
  /** The backend's classification: true for a fault worth waiting out. */
  transient: (error: unknown) => boolean;
  /** Told before each retry (the CLI's stderr line). */
  onRetry?: (notice: RetryNotice) => void;
  /** Where the store is, for the give-up message. */
  where: string;
  /**
   * Runs one operation with its budget known to the backend, for waits inside it on the operation's behalf
   * (PostgreSQL's commit check): they end with the operation's `store.retry`, a job's own included.
   */
  withBudget?: <T>(budgetMs: number, operation: () => Promise<T>) => Promise<T>;
}

/** What a view may change: its own budget (a job's `store.retry`), and one more listener (its events). */
export interface RetryScope {
  budgetMs?: number;
  onRetry?: (notice: RetryNotice) => void;
}

const RETRYING = Symbol("hermes.retrying");
/**
 * Shared by a store and its scoped views: once an operation gave up, the store counts as down, and the next
 * operations try once each (no second budget per call: a run that has to record its end after an outage
 * ends in seconds, not minutes) until one succeeds.
 */
interface Health {
  down: boolean;
}
interface RetryingState {
  inner: Store;
  options: RetryingOptions;
  health: Health;
}
type Retrying = Store & { [RETRYING]: RetryingState };

/** Not retried: closing is not a store operation, and the store is gone after it. */
const PASS_THROUGH = new Set<PropertyKey>(["close"]);

export function retryingStore<S extends Store>(
  store: S,
  options: RetryingOptions,
  health: Health = { down: false },
): S {
  const wrapped = new Map<PropertyKey, unknown>();
  const once = {
    ...options,
    policy: { ...options.policy, budgetMs: 0 },
    down: { budgetMs: options.policy.budgetMs },
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === RETRYING) return { inner: store, options, health } satisfies RetryingState;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function" || PASS_THROUGH.has(property)) {
        return typeof value === "function" ? value.bind(target) : value;
      }
      let method = wrapped.get(property);
      if (!method) {
        method = async (...args: unknown[]) => {
          try {
            const chosen = health.down ? once : options;
            const result = await withRetry(
              String(property),
              () => {
                const operation = () => value.apply(target, args);
                return options.withBudget
                  ? options.withBudget(chosen.policy.budgetMs, operation)
                  : operation();
              },
              chosen,
            );
            health.down = false;
            return result;
          } catch (error) {
            if (error instanceof StoreUnavailableError) health.down = true;
            throw error;
          }
        };
        wrapped.set(property, method);
      }
      return method;
    },
  });
}

/**
 * A view of `store` with `scope` applied (its budget instead, its listener as well), when `store` is a
 * retrying store; `store` itself otherwise.
 */
export function retryScope<S extends Store>(store: S, scope: RetryScope): S {
  const state = (store as unknown as Partial<Retrying>)[RETRYING];
  if (!state) return store;
  const { options, health } = state;
  const listeners = [options.onRetry, scope.onRetry].filter((f) => f !== undefined);
  return retryingStore(state.inner as S, {
    ...options,
    policy: scope.budgetMs === undefined ? options.policy : { ...options.policy, budgetMs: scope.budgetMs },
    onRetry: (notice) => listeners.forEach((listener) => listener(notice)),
  }, health);
}
