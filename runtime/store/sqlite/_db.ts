/**
 * One SQLite connection with cached prepared statements and `BEGIN IMMEDIATE` write transactions (a deferred
 * transaction that reads then writes fails at once with SQLITE_BUSY, whatever the busy timeout).
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import type { Clock } from "../../core/clock.ts";

export type Row = Record<string, SQLInputValue>;

export class SqliteDb {
  readonly db: DatabaseSync;
  readonly clock: Clock;
  /** This process's host, as holders name it: only its holders can be proven dead. */
  readonly host: string;
  #statements = new Map<string, StatementSync>();
  #inTransaction = false;

  constructor(db: DatabaseSync, context: { clock: Clock; host: string }) {
    this.db = db;
    this.clock = context.clock;
    this.host = context.host;
  }

  /** A cached prepared statement. */
  stmt(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` inside `BEGIN IMMEDIATE … COMMIT`, or inside the transaction already open; rolls back if it throws. */
  immediate<T>(fn: () => T): T {
    if (this.#inTransaction) return fn();
    this.db.exec("BEGIN IMMEDIATE");
    this.#inTransaction = true;
    try {
      const result = fn();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      throw error;
    } finally {
      this.#inTransaction = false;
    }
  }

  close(): void {
    this.#statements.clear();
    if (this.db.isOpen) this.db.close();
  }
}

/** Runs a synchronous operation now and hands back its result, or its error, as a promise. */
export function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `value` as a JSON array parameter for `IN (SELECT value FROM json_each(?))`. */
export function jsonList(values: readonly (string | number)[]): string {
  return JSON.stringify(values);
}
