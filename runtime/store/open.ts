/**
 * The store a location names, opened: the backend is chosen here (a postgres:// URL or a SQLite file), with
 * its fault classifier, so a front-end passes a location and gets a Store, whichever backend it is.
 */
import { dirname } from "../core/path.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { errorMessage, RunError, ValidationError } from "../core/errors.ts";
import type { Store } from "./store.ts";
import { isPostgresUrl, redactUrl } from "./postgres/_url.ts";
import type { SessionLister } from "./sqlite/lister.ts";
import { isTransientSqliteError, sqliteFailure } from "./sqlite/faults.ts";
import type { RetryPolicy } from "./retry.ts";
import { DEFAULT_RETRY_MS, type RetryNotice } from "./retry_notice.ts";

/** How the store's transient faults are waited out: for `budgetMs`, each retry told to `onRetry`. */
export interface StoreRetry {
  budgetMs: number;
  onRetry?: (notice: RetryNotice) => void;
}

/** A store with the clock its leases and claims are judged by: `clock` on SQLite, the database's on PostgreSQL. */
export type OpenedStore = Store & { readonly clock: Clock };

/**
 * Opens the store at `location`: a postgres:// URL (its module, ~19 ms to load, is imported only then) or a
 * SQLite file, creating its directory when needed. Each backend's transient faults (its classifier) are
 * waited out for `retry.budgetMs`, on opening and on every operation. `host` names this host in holders. A
 * store that cannot be used is one error line naming it.
 */
export async function openStore(
  location: string,
  { clock, host, retry }: { clock: Clock; host: string; retry?: StoreRetry },
): Promise<OpenedStore> {
  // Loaded here, not at start-up: `sessions list` never opens a store.
  const [{ StoreUnavailableError, withRetry }, { retryingStore }] = await Promise.all([
    import("./retry.ts"),
    import("./retrying_store.ts"),
  ]);
  const policy: RetryPolicy = { budgetMs: retry?.budgetMs ?? DEFAULT_RETRY_MS, clock: systemClock };
  const onRetry = retry?.onRetry;
  if (isPostgresUrl(location)) {
    const [{ openPostgresStore }, { isTransientPgError }, { AsyncLocalStorage }] = await Promise.all([
      import("./postgres/postgres_store.ts"),
      import("./postgres/faults.ts"),
      // PostgreSQL's alone (some 4 ms to load): a SQLite store has no wait inside an operation to bound.
      import("node:async_hooks"),
    ]);
    const where = redactUrl(location);
    const options = { policy, transient: isTransientPgError, where, ...(onRetry ? { onRetry } : {}) };
    // The budget of the operation being run, carried along its calls down to the commit check.
    const operationBudget = new AsyncLocalStorage<number>();
    try {
      const store = await withRetry(
        "connect",
        () =>
          openPostgresStore(location, {
            host,
            commitCheck: { ...options, operationBudgetMs: () => operationBudget.getStore() },
          }),
        options,
      );
      return retryingStore(store, {
        ...options,
        withBudget: (budgetMs, operation) => operationBudget.run(budgetMs, operation),
      });
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      // A driver's message may span lines (a server's DETAIL): the user gets one line.
      const line = errorMessage(error).replace(/\s*\n\s*/g, " ");
      if (error instanceof ValidationError) throw new ValidationError(line, { cause: error });
      throw new RunError(`Cannot use the store at ${redactUrl(location)}: ${line}`, {
        reason: "store_error",
        cause: error,
      });
    }
  }
  // Imported on use, like PostgreSQL's: a command that only lists (openSessionLister) never loads it.
  const { openSqliteStore } = await import("./sqlite/sqlite_store.ts");
  try {
    Deno.mkdirSync(dirname(location), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new RunError(`Cannot create the store ${location}: ${errorMessage(error)}`, {
      reason: "store_error",
    });
  }
  const options = {
    policy,
    transient: isTransientSqliteError,
    where: location,
    ...(onRetry ? { onRetry } : {}),
  };
  try {
    const store = await withRetry(
      "open",
      () => Promise.resolve().then(() => openSqliteStore(location, { clock, host })),
      options,
    );
    return retryingStore(Object.assign(store, { clock }), options);
  } catch (error) {
    throw sqliteFailure(error, location) ?? error;
  }
}

/**
 * A failure of the store at `location` that escaped its operation, as one line naming the store (a SQLite
 * file that is not a store is bad input, exit 2), or null when it is not the store's.
 */
export function storeFailure(error: unknown, location: string): RunError | ValidationError | null {
  return isPostgresUrl(location) ? null : sqliteFailure(error, location);
}

export type { SessionLister };

/**
 * The sessions of the store at `location` read without opening the store: a SQLite file at the current
 * schema version, else undefined (PostgreSQL, no file yet, an older schema) and the caller uses openStore.
 */
export async function openSessionLister(location: string): Promise<SessionLister | undefined> {
  if (isPostgresUrl(location)) return undefined;
  // Imported on use: a command that opens the store (hermes run) never lists.
  const { openSqliteLister } = await import("./sqlite/lister.ts");
  return openSqliteLister(location);
}
