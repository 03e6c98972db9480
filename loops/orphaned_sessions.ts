/**
 * Sessions whose live loop or heartbeat lost its process: still `running`, an active `loop` or `heartbeat`
 * in session_kv, and an owner that is provably dead. A daemon adopts such a session (compare-and-set on
 * the owner columns, so one process wins) and resumes it.
 */
import { isProvablyDead, type ProcessIdentity } from "../runtime/core/process_identity.ts";
import type { Store } from "../runtime/store/store.ts";

export interface OrphanedSession {
  id: string;
  job: string;
  owner_host: string | null;
  owner_pid: number | null;
  owner_started: string | null;
}

export function orphanedLoopSessions(store: Store): OrphanedSession[] {
  const rows = store.stmt(
    `SELECT DISTINCT s.id, s.job, s.owner_host, s.owner_pid, s.owner_started
     FROM session_kv kv JOIN sessions s ON s.id = kv.session_id
     WHERE kv.key IN ('loop', 'heartbeat') AND json_extract(kv.value, '$.status') = 'active'
       AND s.status = 'running' AND s.archived_at IS NULL AND s.owner_pid IS NOT NULL`,
  ).all() as unknown as OrphanedSession[];
  return rows.filter((s) =>
    isProvablyDead({ host: s.owner_host ?? "", pid: Number(s.owner_pid), started: s.owner_started ?? "" })
  );
}

/** Makes `holder` the session's owner unless someone else changed the owner first. */
export function adoptSession(store: Store, session: OrphanedSession, holder: ProcessIdentity): boolean {
  return store.immediate(() =>
    Number(
      store.stmt(
        `UPDATE sessions SET owner_host = ?, owner_pid = ?, owner_started = ?
         WHERE id = ? AND owner_host IS ? AND owner_pid IS ? AND owner_started IS ?`,
      ).run(
        holder.host,
        holder.pid,
        holder.started,
        session.id,
        session.owner_host,
        session.owner_pid,
        session.owner_started,
      ).changes,
    ) === 1
  );
}
