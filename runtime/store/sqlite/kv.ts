/** The `session_kv` table: per-session JSON values (loop and heartbeat state, compaction guards). */
import type { StateOps } from "../store.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

export function stateOps(db: SqliteDb): StateOps {
  return {
    getState: <T>(sessionId: string, key: string) => settle(() => getState<T>(db, sessionId, key)),
    setState: (sessionId, key, value) =>
      settle(() => db.immediate(() => setState(db, sessionId, key, value))),
    deleteState: (sessionId, key) =>
      settle(() => {
        db.immediate(() =>
          db.stmt("DELETE FROM session_kv WHERE session_id = ? AND key = ?").run(sessionId, key)
        );
      }),
  };
}

export function getState<T>(db: SqliteDb, sessionId: string, key: string): T | undefined {
  const row = db.stmt("SELECT value FROM session_kv WHERE session_id = ? AND key = ?").get(sessionId, key) as
    | Row
    | undefined;
  return row ? JSON.parse(String(row.value)) as T : undefined;
}

/** Upserts one value; the caller holds the write transaction. */
export function setState(db: SqliteDb, sessionId: string, key: string, value: unknown): void {
  db.stmt(
    `INSERT INTO session_kv (session_id, key, value, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  ).run(sessionId, key, JSON.stringify(value), db.clock.now());
}
