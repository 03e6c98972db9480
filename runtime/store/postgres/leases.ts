/**
 * The `compaction_leases` table (docs/compaction.md): one row per session naming its holder. Taken only when free,
 * expired, or held by a process provably dead on this host (a holder on another host only ever expires);
 * refresh and release are qualified by the holder's nonce, so a stale holder can never extend or free a
 * newer holder's lease. Expiry is judged at the caller's `now`: give the store's clock (the database's time
 * line, see _clock.ts) to every process that takes leases.
 */
import type { AcquireResult, Lease, LeaseOps } from "../store.ts";
import { leaseTakeover } from "../rules.ts";
import type { PgDb, Q } from "./_db.ts";
import { toLease } from "./_rows.ts";

export function leaseOps(db: PgDb): LeaseOps {
  const { sql } = db;
  return {
    readLease: (sessionId) => readLease(sql, sessionId),
    acquireLease: ({ sessionId, holder, now, ttlMs }) =>
      db.tx(async (q): Promise<AcquireResult> => {
        const lease: Lease = { session_id: sessionId, holder, acquired_at: now, expires_at: now + ttlMs };
        // A free lease is an insert; a taken one is locked, judged, and overwritten only if it may be taken.
        // The row can vanish between the two statements (released meanwhile): then it is free again.
        for (let attempt = 0; attempt < 5; attempt++) {
          const inserted = await q`
            INSERT INTO compaction_leases (session_id, holder_host, holder_pid, holder_started, holder_nonce,
              acquired_at, expires_at)
            VALUES (${sessionId}, ${holder.host}, ${holder.pid}, ${holder.started}, ${holder.nonce},
              ${lease.acquired_at}, ${lease.expires_at})
            ON CONFLICT (session_id) DO NOTHING`;
          if (inserted.count === 1) return { acquired: true, lease };
          const current = await readLease(q, sessionId, { lock: true });
          if (!current) continue;
          const tookOver = leaseTakeover(current, { now, host: db.host });
          if (!tookOver) return { acquired: false, current };
          await q`
            UPDATE compaction_leases SET holder_host = ${holder.host}, holder_pid = ${holder.pid},
              holder_started = ${holder.started}, holder_nonce = ${holder.nonce},
              acquired_at = ${lease.acquired_at}, expires_at = ${lease.expires_at}
            WHERE session_id = ${sessionId}`;
          return { acquired: true, lease, took_over: tookOver };
        }
        throw new Error(
          `Cannot acquire the compaction lease of session "${sessionId}": it keeps changing hands`,
        );
      }),
    async refreshLease({ sessionId, nonce, now, ttlMs }) {
      const result = await sql`
        UPDATE compaction_leases SET expires_at = ${now + ttlMs}
        WHERE session_id = ${sessionId} AND holder_nonce = ${nonce} AND expires_at > ${now}`;
      return result.count === 1;
    },
    async releaseLease({ sessionId, nonce }) {
      const result = await sql`
        DELETE FROM compaction_leases WHERE session_id = ${sessionId} AND holder_nonce = ${nonce}`;
      return result.count === 1;
    },
  };
}

/** The session's lease; `lock` holds its row until the caller's transaction ends. */
export async function readLease(q: Q, sessionId: string, options: { lock?: boolean } = {}) {
  const [row] = options.lock
    ? await q`SELECT * FROM compaction_leases WHERE session_id = ${sessionId} FOR UPDATE`
    : await q`SELECT * FROM compaction_leases WHERE session_id = ${sessionId}`;
  return row ? toLease(row) : undefined;
}
