/**
 * Test-only escape hatch into a SQLite store: its connection, and helpers for states no operation produces
 * (rows deactivated by hand, a commit paused halfway, a row count). Never for production code.
 */
import type { Store } from "../store.ts";
import type { SqliteDb } from "./_db.ts";
import { SQLITE_HANDLE } from "./_handle.ts";

export function sqliteHandle(store: Store): SqliteDb {
  const db = (store as Store & { [SQLITE_HANDLE]?: SqliteDb })[SQLITE_HANDLE];
  if (!db) throw new TypeError("Cannot reach the SQLite connection: the store is not a SQLite store");
  return db;
}

/** The first column of the first row of `sql` as a number (0 without a row): `SELECT count(*) …`. */
export function countRows(store: Store, sql: string, ...params: (string | number)[]): number {
  return Number(Object.values(sqliteHandle(store).db.prepare(sql).get(...params) ?? { n: 0 })[0]);
}

/** Marks rows of a session as replaced by compaction (active = 0), without a compaction. */
export function deactivateRows(store: Store, sessionId: string, seqs: number[]): void {
  sqliteHandle(store).stmt(
    "UPDATE messages SET active = 0 WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?))",
  ).run(sessionId, JSON.stringify(seqs));
}

/**
 * Blocks this process's connection inside a write, after calling `reached` (which may print a marker for a
 * test that kills the process there): `commit` right after a compaction commit archives its first row,
 * `release` as a compaction lease is released. Only this connection is affected (a TEMP trigger and a
 * function registered on it); the store file is not changed.
 */
export function pauseInside(store: Store, point: "commit" | "release", reached: () => void): void {
  const { db } = sqliteHandle(store);
  const blocker = new Int32Array(new SharedArrayBuffer(4));
  db.function("hermes_test_pause", () => {
    reached();
    Atomics.wait(blocker, 0, 0, 60_000);
    return null;
  });
  db.exec(
    point === "commit"
      ? `CREATE TEMP TRIGGER pause_commit AFTER UPDATE OF active ON main.messages
         BEGIN SELECT hermes_test_pause(); END`
      : `CREATE TEMP TRIGGER pause_release BEFORE DELETE ON main.compaction_leases
         BEGIN SELECT hermes_test_pause(); END`,
  );
}
