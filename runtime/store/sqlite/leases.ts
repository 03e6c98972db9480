/**
 * The `compaction_leases` table (docs/compaction.md): one row per session naming its holder. Taken only when free,
 * expired, or held by a process provably dead on this host; refresh and release are qualified by the
 * holder's nonce, so a stale holder can never extend or free a newer holder's lease.
 */
import type { Lease, LeaseOps } from "../store.ts";
import { leaseTakeover } from "../rules.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";
import { HOLDER } from "./_holder.ts";

export function leaseOps(db: SqliteDb): LeaseOps {
  return {
    readLease: (sessionId) => settle(() => readLease(db, sessionId)),
    acquireLease: ({ sessionId, holder, now, ttlMs }) =>
      settle(() =>
        db.immediate(() => {
          const current = readLease(db, sessionId);
          const tookOver = current ? leaseTakeover(current, { now, host: db.host }) : null;
          if (current && !tookOver) return { acquired: false as const, current };
          const lease: Lease = { session_id: sessionId, holder, acquired_at: now, expires_at: now + ttlMs };
          db.stmt(
            `INSERT INTO compaction_leases (session_id, ${HOLDER.names}, acquired_at, expires_at)
             VALUES (?, ${HOLDER.placeholders}, ?, ?)
             ON CONFLICT (session_id) DO UPDATE SET ${HOLDER.fromExcluded},
               acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
          ).run(sessionId, ...HOLDER.values(holder), lease.acquired_at, lease.expires_at);
          return tookOver
            ? { acquired: true as const, lease, took_over: tookOver }
            : { acquired: true as const, lease };
        })
      ),
    refreshLease: ({ sessionId, nonce, now, ttlMs }) =>
      settle(() =>
        db.immediate(() =>
          db.stmt(
            "UPDATE compaction_leases SET expires_at = ? WHERE session_id = ? AND holder_nonce = ? AND expires_at > ?",
          ).run(now + ttlMs, sessionId, nonce, now).changes === 1
        )
      ),
    releaseLease: ({ sessionId, nonce }) =>
      settle(() =>
        db.immediate(() =>
          db.stmt("DELETE FROM compaction_leases WHERE session_id = ? AND holder_nonce = ?").run(
            sessionId,
            nonce,
          )
            .changes === 1
        )
      ),
  };
}

export function readLease(db: SqliteDb, sessionId: string): Lease | undefined {
  const row = db.stmt("SELECT * FROM compaction_leases WHERE session_id = ?").get(sessionId) as
    | Row
    | undefined;
  if (!row) return undefined;
  return {
    session_id: String(row.session_id),
    holder: HOLDER.read(row),
    acquired_at: Number(row.acquired_at),
    expires_at: Number(row.expires_at),
  };
}
