/**
 * The PostgreSQL connection pool of one store, and the transactions every write runs in: short, READ
 * COMMITTED, nothing awaited inside but the database. A transaction the server aborted as a deadlock
 * victim is run again (its work is database work only, so running it again is safe).
 */
import type postgres from "postgres";
import type { Clock } from "../../core/clock.ts";

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

export class PgDb {
  readonly sql: Sql;
  readonly clock: Clock;
  /** This process's host, as holders name it: only its holders can be proven dead. */
  readonly host: string;

  constructor(sql: Sql, context: { clock: Clock; host: string }) {
    this.sql = sql;
    this.clock = context.clock;
    this.host = context.host;
  }

  /** Runs `fn` in one transaction (BEGIN … COMMIT, ROLLBACK when it throws). */
  async tx<T>(fn: (q: Q) => Promise<T>): Promise<T> {
    for (let attempt = 1;; attempt++) {
      try {
        return await this.sql.begin((q) => fn(q)) as T;
      } catch (error) {
        if (attempt >= 3 || (error as { code?: string }).code !== DEADLOCK) throw error;
      }
    }
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
