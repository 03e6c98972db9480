/**
 * The `workspace_locks` table (docs/workspaces.md): one row per working tree (its real path) naming the
 * session writing it and that session's process. Taken when free, held by the same session, expired, or
 * held by a process provably dead on this host (a holder on another host only ever expires); refresh and
 * release are qualified by the holder's nonce. Expiry is judged at the caller's `now` (the store's clock).
 */
import type { WorkspaceAcquire, WorkspaceLock, WorkspaceLockOps } from "../store.ts";
import { leaseTakeover } from "../rules.ts";
import type { PgDb, Q } from "./_db.ts";
import { readIdentity } from "./_rows.ts";

export function workspaceLockOps(db: PgDb): WorkspaceLockOps {
  const { sql } = db;
  return {
    acquireWorkspace: ({ path, sessionId, holder, now, ttlMs }) =>
      db.tx(async (q): Promise<WorkspaceAcquire> => {
        // A free tree is an insert; a held one is locked, judged, and overwritten only if it may be taken.
        // The row can vanish between the two statements (released meanwhile): then it is free again.
        for (let attempt = 0; attempt < 5; attempt++) {
          const inserted = await q`
            INSERT INTO workspace_locks (path, session_id, holder_host, holder_pid, holder_started,
              holder_nonce, acquired_at, expires_at)
            VALUES (${path}, ${sessionId}, ${holder.host}, ${holder.pid}, ${holder.started}, ${holder.nonce},
              ${now}, ${now + ttlMs})
            ON CONFLICT (path) DO NOTHING`;
          if (inserted.count === 1) return { acquired: true };
          const current = await readLock(q, path);
          if (!current) continue;
          const tookOver = current.session_id === sessionId
            ? null
            : leaseTakeover(current, { now, host: db.host });
          if (current.session_id !== sessionId && !tookOver) return { acquired: false, current };
          await q`
            UPDATE workspace_locks SET session_id = ${sessionId}, holder_host = ${holder.host},
              holder_pid = ${holder.pid}, holder_started = ${holder.started}, holder_nonce = ${holder.nonce},
              acquired_at = ${now}, expires_at = ${now + ttlMs}
            WHERE path = ${path}`;
          return tookOver ? { acquired: true, took_over: tookOver } : { acquired: true };
        }
        throw new Error(`Cannot take the workspace lock of ${path}: it kept changing hands`);
      }),
    refreshWorkspace: async ({ path, nonce, now, ttlMs }) =>
      (await sql`
        UPDATE workspace_locks SET expires_at = ${now + ttlMs}
        WHERE path = ${path} AND holder_nonce = ${nonce} AND expires_at > ${now}`).count === 1,
    releaseWorkspace: async ({ path, nonce }) =>
      (await sql`DELETE FROM workspace_locks WHERE path = ${path} AND holder_nonce = ${nonce}`).count === 1,
  };
}

async function readLock(q: Q, path: string): Promise<WorkspaceLock | undefined> {
  const [row] = await q`SELECT * FROM workspace_locks WHERE path = ${path} FOR UPDATE`;
  if (!row) return undefined;
  return {
    path: String(row.path),
    session_id: String(row.session_id),
    holder: readIdentity(row, "holder"),
    acquired_at: Number(row.acquired_at),
    expires_at: Number(row.expires_at),
  };
}
