/** The `session_kv` table: per-session JSON values (loop and heartbeat state, compaction guards). */
import type { StateOps } from "../store.ts";
import type { PgDb, Q } from "./_db.ts";

export function stateOps(db: PgDb): StateOps {
  const { sql } = db;
  return {
    getState: <T>(sessionId: string, key: string) => getState<T>(sql, sessionId, key),
    setState: (sessionId, key, value) => setState(db, sql, { sessionId, key, value }),
    async deleteState(sessionId, key) {
      await sql`DELETE FROM session_kv WHERE session_id = ${sessionId} AND key = ${key}`;
    },
  };
}

export async function getState<T>(q: Q, sessionId: string, key: string): Promise<T | undefined> {
  const [row] = await q`SELECT value FROM session_kv WHERE session_id = ${sessionId} AND key = ${key}`;
  return row ? JSON.parse(String(row.value)) as T : undefined;
}

/** Upserts one value (inside the caller's transaction when `q` is one). */
export async function setState(
  db: PgDb,
  q: Q,
  entry: { sessionId: string; key: string; value: unknown },
): Promise<void> {
  await q`
    INSERT INTO session_kv (session_id, key, value, updated_at)
    VALUES (${entry.sessionId}, ${entry.key}, ${JSON.stringify(entry.value)}, ${db.clock.now()})
    ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;
}
