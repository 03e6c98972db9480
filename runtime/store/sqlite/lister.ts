/**
 * Listing the sessions of a SQLite store without opening it as a Store: one read-only connection and one
 * query, for `hermes sessions list`, whose start-up is measured against a bare node:sqlite script. Only a
 * store at the current schema version is read this way; anything else (no file yet, an older schema, any
 * error) is undefined or thrown, and the caller opens the full store, which migrates, retries and reports.
 */
import { DatabaseSync } from "node:sqlite";
import type { ListSessionsOptions } from "../store.ts";
import { listSessionsJson } from "./listing.ts";
import { SCHEMA_VERSION } from "../schema_version.ts";

export interface SessionLister {
  /** The sessions as SessionSummary JSON texts, newest first (Store.listSessionsJson). */
  listSessionsJson(options?: ListSessionsOptions): string[];
  close(): void;
}

export function openSqliteLister(path: string): SessionLister | undefined {
  let connection: DatabaseSync;
  try {
    connection = new DatabaseSync(path, { readOnly: true });
  } catch {
    return undefined; // no store there yet, or one this process cannot open read-only
  }
  try {
    const { user_version } = connection.prepare("PRAGMA user_version").get() as { user_version: number };
    if (user_version !== SCHEMA_VERSION) {
      connection.close();
      return undefined;
    }
  } catch {
    connection.close();
    return undefined;
  }
  // The connection itself, not a SqliteDb (its statement cache, transactions, clock): one query needs none of
  // it, and each module costs the path of `sessions list` a fraction of a millisecond.
  const statements = { stmt: (sql: string) => connection.prepare(sql) };
  return {
    listSessionsJson: (options) => listSessionsJson(statements, options),
    close: () => {
      if (connection.isOpen) connection.close();
    },
  };
}
