/**
 * Is a session in use by a live process? Deleting or archiving it under a running agent or an active
 * compaction would pull the rows from under it, so those operations refuse unless forced.
 */
import { RunError } from "../core/errors.ts";
import { isProvablyDead } from "../core/process_identity.ts";
import type { Store } from "../store/store.ts";

export interface BusySession {
  id: string;
  /** Who holds it, e.g. `running in pid 4242 on build-7`. */
  reason: string;
}

/** Refusal to touch busy sessions; `busy` lists each one and why. */
export class SessionBusyError extends RunError {
  readonly busy: BusySession[];
  constructor(action: string, busy: BusySession[]) {
    const list = busy.map((b) => `${b.id} (${b.reason})`).join(", ");
    super(
      `Cannot ${action}: ${
        busy.length === 1 ? "session is" : "sessions are"
      } in use by another process: ${list}; ` +
        `nothing was changed (use --force to override)`,
      { reason: "session_busy" },
    );
    this.name = "SessionBusyError";
    this.busy = busy;
  }
}

/**
 * The sessions among `ids` that a live process holds: an owner (a run, a daemon loop) that is not provably
 * dead, or an unexpired compaction lease whose holder is not provably dead. A holder on another host is
 * never provably dead, so it always counts as live.
 */
export function findBusySessions(store: Store, ids: readonly string[]): BusySession[] {
  const list = JSON.stringify(ids);
  const busy = new Map<string, string>();
  const owners = store.stmt(
    `SELECT id, owner_host, owner_pid, owner_started FROM sessions
     WHERE id IN (SELECT value FROM json_each(?)) AND owner_pid IS NOT NULL AND status IN ('running', 'idle')`,
  ).all(list);
  for (const row of owners) {
    const holder = identity(row.owner_host, row.owner_pid, row.owner_started);
    if (!isProvablyDead(holder)) busy.set(String(row.id), `running in pid ${holder.pid} on ${holder.host}`);
  }
  const leases = store.stmt(
    `SELECT session_id, holder_host, holder_pid, holder_started, expires_at FROM compaction_leases
     WHERE session_id IN (SELECT value FROM json_each(?)) AND expires_at > ?`,
  ).all(list, store.clock.now());
  for (const row of leases) {
    const holder = identity(row.holder_host, row.holder_pid, row.holder_started);
    if (isProvablyDead(holder)) continue;
    const id = String(row.session_id);
    const compacting = `compacting in pid ${holder.pid} on ${holder.host}, lease until ${
      new Date(Number(row.expires_at)).toISOString()
    }`;
    busy.set(id, busy.has(id) ? `${busy.get(id)}; ${compacting}` : compacting);
  }
  return ids.filter((id) => busy.has(id)).map((id) => ({ id, reason: busy.get(id)! }));
}

function identity(host: unknown, pid: unknown, started: unknown) {
  return {
    host: String(host ?? ""),
    pid: Number(pid),
    started: started === null ? "unknown" : String(started),
  };
}
