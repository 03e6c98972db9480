/**
 * Is a session in use by a live process? Its owner (a run, a daemon loop) or the holder of an unexpired
 * compaction lease, unless provably dead; a holder on another host is never provably dead. And the
 * sessions whose recurring work outlived its owner.
 */
import { isProvablyDead } from "../../core/process_identity.ts";
import type { BusySession, OrphanedSession } from "../store.ts";
import { busyReasons, isStalledOwner } from "../rules.ts";
import { jsonList, type Row, type SqliteDb } from "./_db.ts";
import { HOLDER, OWNER } from "./_holder.ts";

export function findBusySessions(db: SqliteDb, ids: readonly string[]): BusySession[] {
  const list = jsonList(ids);
  const owners = db.stmt(
    `SELECT id, ${OWNER.names} FROM sessions
     WHERE id IN (SELECT value FROM json_each(?)) AND owner_pid IS NOT NULL AND status IN ('running', 'idle')`,
  ).all(list) as Row[];
  const leases = db.stmt(
    `SELECT session_id, ${HOLDER.names}, expires_at FROM compaction_leases
     WHERE session_id IN (SELECT value FROM json_each(?)) AND expires_at > ?`,
  ).all(list, db.clock.now()) as Row[];
  return busyReasons(ids, {
    owners: owners.map((row) => ({ id: String(row.id), holder: OWNER.read(row) })),
    leases: leases.map((row) => ({
      session_id: String(row.session_id),
      holder: HOLDER.read(row),
      expires_at: Number(row.expires_at),
    })),
  }, db.host);
}

export function orphanedSessions(db: SqliteDb, keys: readonly string[]): OrphanedSession[] {
  // Which states keep a session going is the caller's rule (loops/recurring_active.ts): return them all.
  const rows = db.stmt(
    `SELECT s.id, s.job, s.owner_host, s.owner_pid, s.owner_started, s.owner_expires_at, kv.key, kv.value
     FROM session_kv kv JOIN sessions s ON s.id = kv.session_id
     WHERE kv.key IN (SELECT value FROM json_each(?))
       AND s.status = 'running' AND s.archived_at IS NULL AND s.owner_pid IS NOT NULL
     ORDER BY s.id`,
  ).all(jsonList(keys)) as Row[];
  const sessions = new Map<string, OrphanedSession>();
  const stalled = new Set<string>();
  const now = db.clock.now();
  for (const row of rows) {
    const id = String(row.id);
    let session = sessions.get(id);
    if (!session) {
      session = {
        id,
        job: String(row.job),
        owner_host: row.owner_host === null ? null : String(row.owner_host),
        owner_pid: row.owner_pid === null ? null : Number(row.owner_pid),
        owner_started: row.owner_started === null ? null : String(row.owner_started),
        state: {},
      };
      sessions.set(id, session);
    }
    session.state[String(row.key)] = JSON.parse(String(row.value));
    const expires = row.owner_expires_at === null ? null : Number(row.owner_expires_at);
    if (isStalledOwner(expires, now)) stalled.add(id);
  }
  return [...sessions.values()].filter((s) =>
    stalled.has(s.id) || isProvablyDead(
      { host: s.owner_host ?? "", pid: Number(s.owner_pid), started: s.owner_started ?? "" },
      db.host,
    )
  );
}
