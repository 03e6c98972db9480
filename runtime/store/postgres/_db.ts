/**
 * The PostgreSQL connection pool of one store, and the transactions every write runs in: short, READ
 * COMMITTED, nothing awaited inside but the database. A transaction the server aborted as a deadlock
 * victim is run again (its work is database work only, so running it again is safe).
 *
 * A transaction whose connection broke after its work was done (a server restart while COMMIT was on the
 * wire) may have committed or not: the client cannot tell from the error. Each transaction therefore
 * learns its id first, and after such a break the server is asked (`txid_status`, once it answers again,
 * waiting as `retry` allows) whether it committed: if it did, its result is returned as if nothing had
 * happened; if not, the error is rethrown and the operation may run again. A write is never done twice.
 */
import type postgres from "postgres";
import type { Clock } from "../../core/clock.ts";
import { type RetryNotice, type RetryPolicy, withRetry } from "../retry.ts";
import { isConnectionLoss, isTransientPgError } from "./faults.ts";

/** int8 columns (epoch milliseconds, ids, counts) as numbers: every value the store keeps is below 2^53. */
export const TYPES = {
  int8: {
    to: 20,
    from: [20],
    serialize: (value: number) => String(value),
    parse: (raw: string) => Number(raw),
  },
};

type Types = { int8: number };
export type Sql = postgres.Sql<Types>;
/** Anything that runs a query: the pool, or an open transaction. */
export type Q = postgres.ISql<Types>;
export type Row = postgres.Row;

const DEADLOCK = "40P01";

/** How long to wait for the server to tell whether a cut-off transaction committed. */
export interface CommitCheck {
  policy: RetryPolicy;
  onRetry?: (notice: RetryNotice) => void;
  where: string;
  /** The budget of the store operation the check is part of, when the caller set one: it waits no longer. */
  operationBudgetMs?: () => number | undefined;
}

/** The server still runs the old transaction's backend: ask again. */
class StillInProgress extends Error {
  override name = "StillInProgress";
}

export class PgDb {
  readonly sql: Sql;
  readonly clock: Clock;
  /** This process's host, as holders name it: only its holders can be proven dead. */
  readonly host: string;
  readonly #check: CommitCheck;

  constructor(sql: Sql, context: { clock: Clock; host: string; commitCheck: CommitCheck }) {
    this.sql = sql;
    this.clock = context.clock;
    this.host = context.host;
    this.#check = context.commitCheck;
  }

  /**
   * Runs `fn` in one transaction (BEGIN … COMMIT, ROLLBACK when it throws). `verify` confirms from what the
   * transaction wrote that it committed, for the one case the server's answer can be wrong: after a crash
   * the server may hand a transaction id it never logged to a new transaction, whose commit then looks
   * like ours.
   *
   * BEGIN waits for its answer before the work is sent (the driver's `begin`). Sending it ahead of the work
   * on a `reserve()`d connection would save that round trip, but npm:postgres 3.4.9 strands a reserve that
   * has to open a connection (porsager/postgres#751, #1195): after a server restart the pool never hands
   * out a connection again.
   */
  async tx<T>(fn: (q: Q) => Promise<T>, verify?: (q: Q, value: T) => Promise<boolean>): Promise<T> {
    for (let attempt = 1;; attempt++) {
      let done: { xid: number; boot: string; value: T } | undefined;
      try {
        return await this.sql.begin(async (q) => {
          // Sent ahead of the work on the same connection: no extra round trip.
          const id = q`SELECT txid_current() AS xid, pg_postmaster_start_time()::text AS boot`.execute();
          const value = await fn(q);
          const [row] = await id;
          done = { xid: Number(row!.xid), boot: String(row!.boot), value };
          return value;
        }) as T;
      } catch (error) {
        if (done && isConnectionLoss(error)) {
          if (await this.#committed(done, verify)) return done.value;
          throw error;
        }
        if (attempt >= 3 || (error as { code?: string }).code !== DEADLOCK) throw error;
      }
    }
  }

  /** Whether the cut-off transaction committed, asked of the server as soon as it answers. */
  #committed<T>(
    done: { xid: number; boot: string; value: T },
    verify: ((q: Q, value: T) => Promise<boolean>) | undefined,
  ): Promise<boolean> {
    return withRetry("the commit check", async () => {
      let row;
      try {
        [row] = await this.sql`
          SELECT txid_status(${done.xid}::bigint) AS status, pg_postmaster_start_time()::text AS boot`;
      } catch (error) {
        // The server came back from a crash without ever having logged this transaction id: it did not
        // commit (a commit is logged, and the id with it).
        if (/is in the future/.test(String((error as Error).message))) return false;
        throw error;
      }
      if (row!.status === "in progress") {
        throw new StillInProgress(`transaction ${done.xid} is still in progress`);
      }
      if (row!.status !== "committed") return false;
      // The same server process: ids are never handed out twice, so the answer is about this transaction.
      if (row!.boot === done.boot || !verify) return true;
      return await verify(this.sql, done.value);
    }, {
      ...this.#check,
      // No longer than the operation it is part of may wait (a job's store.retry).
      policy: {
        ...this.#check.policy,
        budgetMs: Math.min(this.#check.policy.budgetMs, this.#check.operationBudgetMs?.() ?? Infinity),
      },
      transient: (error) => error instanceof StillInProgress || isTransientPgError(error),
    });
  }
}

/** A JSON parameter (a list of ids, rows to insert), for `jsonb_array_elements_text` or `json_to_recordset`. */
export function json(q: Q, value: unknown): postgres.Parameter {
  return q.json(value as postgres.JSONValue);
}

/** The text of a value for a `text` column: PostgreSQL text cannot hold NUL, so it becomes U+FFFD. */
export function pgText(value: string): string;
export function pgText(value: string | null | undefined): string | null;
export function pgText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value.includes("\0") ? value.replaceAll("\0", "\uFFFD") : value;
}
