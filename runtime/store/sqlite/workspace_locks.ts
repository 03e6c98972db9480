/**
 * The `workspace_locks` table (docs/workspaces.md): one row per working tree (its real path) naming the
 * session writing it and that session's process. Taken when free, held by the same session, expired, or
 * held by a process provably dead on this host; refresh and release are qualified by the holder's nonce.
 */
import type { WorkspaceLock, WorkspaceLockOps } from "../store.ts";
import { leaseTakeover } from "../rules.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";
import { HOLDER } from "./_holder.ts";

export function workspaceLockOps(db: SqliteDb): WorkspaceLockOps {
  return {
    acquireWorkspace: ({ path, sessionId, holder, now, ttlMs }) =>
      settle(() =>
        db.immediate(() => {
          const current = readLock(db, path);
          const tookOver = current && current.session_id !== sessionId
            ? leaseTakeover(current, { now, host: db.host })
            : null;
          if (current && current.session_id !== sessionId && !tookOver) {
            return { acquired: false as const, current };
          }
          db.stmt(
            `INSERT INTO workspace_locks (path, session_id, ${HOLDER.names}, acquired_at, expires_at)
             VALUES (?, ?, ${HOLDER.placeholders}, ?, ?)
             ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id, ${HOLDER.fromExcluded},
               acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
          ).run(path, sessionId, ...HOLDER.values(holder), now, now + ttlMs);
          return tookOver ? { acquired: true as const, took_over: tookOver } : { acquired: true as const };
        })
      ),
    refreshWorkspace: ({ path, nonce, now, ttlMs }) =>
      settle(() =>
        db.immediate(() =>
          db.stmt(
            "UPDATE workspace_locks SET expires_at = ? WHERE path = ? AND holder_nonce = ? AND expires_at > ?",
          ).run(now + ttlMs, path, nonce, now).changes === 1
        )
      ),
    releaseWorkspace: ({ path, nonce }) =>
      settle(() =>
        db.immediate(() =>
          db.stmt("DELETE FROM workspace_locks WHERE path = ? AND holder_nonce = ?").run(path, nonce)
            .changes === 1
        )
      ),
  };
}

function readLock(db: SqliteDb, path: string): WorkspaceLock | undefined {
  const row = db.stmt("SELECT * FROM workspace_locks WHERE path = ?").get(path) as Row | undefined;
  if (!row) return undefined;
  return {
    path: String(row.path),
    session_id: String(row.session_id),
    holder: HOLDER.read(row),
    acquired_at: Number(row.acquired_at),
    expires_at: Number(row.expires_at),
  };
}
