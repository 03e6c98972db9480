/**
 * Is a session in use by a live process? Its owner (a run, a daemon loop) or the holder of an unexpired
 * compaction lease, unless provably dead; a holder on another host is never provably dead. And the
 * sessions whose recurring work (a state under one of the keys asked for) outlived its owner.
 */
import { isProvablyDead } from "../../core/process_identity.ts";
import type { BusySession, OrphanedSession } from "../store.ts";
import { busyReasons, isStalledOwner } from "../rules.ts";
import { json, type PgDb, type Q } from "./_db.ts";
import { readIdentity } from "./_rows.ts";

export async function findBusySessions(db: PgDb, q: Q, ids: readonly string[]): Promise<BusySession[]> {
  if (ids.length === 0) return [];
  const list = json(q, ids);
  const owners = await q`
    SELECT id, owner_host, owner_pid, owner_started FROM sessions
    WHERE id IN (SELECT value FROM jsonb_array_elements_text(${list})) AND owner_pid IS NOT NULL
      AND status IN ('running', 'idle')`;
  const leases = await q`
    SELECT session_id, holder_host, holder_pid, holder_started, holder_nonce, expires_at FROM compaction_leases
    WHERE session_id IN (SELECT value FROM jsonb_array_elements_text(${list})) AND expires_at > ${db.clock.now()}`;
  return busyReasons(ids, {
    owners: owners.map((row) => ({ id: String(row.id), holder: readIdentity(row, "owner") })),
    leases: leases.map((row) => ({
      session_id: String(row.session_id),
      holder: readIdentity(row, "holder"),
      expires_at: Number(row.expires_at),
    })),
  }, db.host);
}

export async function orphanedSessions(db: PgDb, keys: readonly string[]): Promise<OrphanedSession[]> {
  if (keys.length === 0) return [];
  const q = db.sql;
  const rows = await q`
    SELECT s.id, s.job, s.owner_host, s.owner_pid, s.owner_started, s.owner_expires_at,
      json_object_agg(kv.key, kv.value) AS state
    FROM session_kv kv JOIN sessions s ON s.id = kv.session_id
    WHERE kv.key IN (SELECT value FROM jsonb_array_elements_text(${json(q, keys)}))
      AND s.status = 'running' AND s.archived_at IS NULL AND s.owner_pid IS NOT NULL
    GROUP BY s.id`;
  const now = db.clock.now();
  const stalled = new Set(
    rows.filter((row) =>
      isStalledOwner(row.owner_expires_at === null ? null : Number(row.owner_expires_at), now)
    )
      .map((row) => String(row.id)),
  );
  return rows.map((row): OrphanedSession => ({
    id: String(row.id),
    job: String(row.job),
    owner_host: row.owner_host === null ? null : String(row.owner_host),
    owner_pid: row.owner_pid === null ? null : Number(row.owner_pid),
    owner_started: row.owner_started === null ? null : String(row.owner_started),
    // json_object_agg of text values: each value is the stored JSON text of one key.
    state: Object.fromEntries(
      Object.entries(row.state as Record<string, string>).map(([key, text]) => [key, JSON.parse(text)]),
    ),
  })).filter((s) =>
    stalled.has(s.id) || isProvablyDead(
      { host: s.owner_host ?? "", pid: Number(s.owner_pid), started: s.owner_started ?? "" },
      db.host,
    )
  );
}
