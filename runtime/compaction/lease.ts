/**
 * Durable compaction leases (DESIGN §9): at most one compaction per session at a time, across processes.
 * The row in `compaction_leases` names its holder (host, pid, process start time, nonce). It is taken only
 * when free, expired, or held by a process that is provably dead on this host; refresh and release are
 * qualified by the holder's nonce, so a stale holder can never extend or free a newer holder's lease.
 */
import type { SQLInputValue } from "node:sqlite";
import type { Clock } from "../core/clock.ts";
import { isProvablyDead, type ProcessIdentity } from "../core/process_identity.ts";
import type { Store } from "../store/store.ts";

export interface Lease {
  session_id: string;
  holder: ProcessIdentity;
  acquired_at: number;
  expires_at: number;
}

export type AcquireResult =
  | { acquired: true; lease: Lease; took_over?: "expired" | "dead_holder" }
  | { acquired: false; current: Lease };

export interface LeaseRef {
  sessionId: string;
  /** The holder's nonce: it alone identifies one acquisition. */
  nonce: string;
}

type Row = Record<string, SQLInputValue>;

export function readLease(store: Store, sessionId: string): Lease | undefined {
  const row = store.stmt("SELECT * FROM compaction_leases WHERE session_id = ?").get(sessionId) as
    | Row
    | undefined;
  return row ? toLease(row) : undefined;
}

/** One `BEGIN IMMEDIATE` transaction: free → take; expired → take; holder provably dead → take; else refuse. */
export function acquireLease(
  store: Store,
  request: { sessionId: string; holder: ProcessIdentity; now: number; ttlMs: number },
): AcquireResult {
  const { sessionId, holder, now, ttlMs } = request;
  return store.immediate((): AcquireResult => {
    const current = readLease(store, sessionId);
    let tookOver: "expired" | "dead_holder" | undefined;
    if (current) {
      if (current.expires_at <= now) tookOver = "expired";
      else if (isProvablyDead(current.holder)) tookOver = "dead_holder";
      else return { acquired: false, current };
    }
    const lease: Lease = {
      session_id: sessionId,
      holder,
      acquired_at: now,
      expires_at: now + ttlMs,
    };
    store.stmt(
      `INSERT INTO compaction_leases (session_id, holder_host, holder_pid, holder_started, holder_nonce, acquired_at,
         expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET holder_host = excluded.holder_host, holder_pid = excluded.holder_pid,
         holder_started = excluded.holder_started, holder_nonce = excluded.holder_nonce,
         acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
    ).run(
      sessionId,
      holder.host,
      holder.pid,
      holder.started,
      holder.nonce,
      lease.acquired_at,
      lease.expires_at,
    );
    return tookOver ? { acquired: true, lease, took_over: tookOver } : { acquired: true, lease };
  });
}

/** Extends the holder's unexpired lease; false when it expired or belongs to someone else now. */
export function refreshLease(store: Store, ref: LeaseRef & { now: number; ttlMs: number }): boolean {
  const { now, ttlMs } = ref;
  return store.immediate(() =>
    store.stmt(
      "UPDATE compaction_leases SET expires_at = ? WHERE session_id = ? AND holder_nonce = ? AND expires_at > ?",
    ).run(now + ttlMs, ref.sessionId, ref.nonce, now).changes === 1
  );
}

/** Frees the lease only if `nonce` still holds it; true when a row was deleted. */
export function releaseLease(store: Store, ref: LeaseRef): boolean {
  return store.immediate(() =>
    store.stmt("DELETE FROM compaction_leases WHERE session_id = ? AND holder_nonce = ?").run(
      ref.sessionId,
      ref.nonce,
    )
      .changes === 1
  );
}

/** Why `nonce` does not own an unexpired lease at `now`, or null when it does. Call inside a transaction. */
export function leaseLostReason(store: Store, ref: LeaseRef & { now: number }): string | null {
  const { nonce, now } = ref;
  const current = readLease(store, ref.sessionId);
  if (!current) return "the lease was released or reclaimed by another process";
  if (current.holder.nonce !== nonce) {
    return `the lease was taken over by pid ${current.holder.pid} on ${current.holder.host}`;
  }
  if (current.expires_at <= now) return `the lease expired at ${new Date(current.expires_at).toISOString()}`;
  return null;
}

function toLease(row: Row): Lease {
  return {
    session_id: String(row.session_id),
    holder: {
      host: String(row.holder_host),
      pid: Number(row.holder_pid),
      started: String(row.holder_started),
      nonce: String(row.holder_nonce),
    },
    acquired_at: Number(row.acquired_at),
    expires_at: Number(row.expires_at),
  };
}

export interface KeptLease {
  /** Aborts (reason: an Error naming why) when a refresh finds the lease gone or expired. */
  readonly lost: AbortSignal;
  /** Stops refreshing; resolves when the refresher has finished. */
  stop(): Promise<void>;
}

/** Refreshes the lease every third of its TTL until stopped or lost. */
export function keepLease(
  store: Store,
  ref: LeaseRef & { ttlMs: number; clock: Clock; onError?: (error: unknown) => void },
): KeptLease {
  const lost = new AbortController();
  const stopped = new AbortController();
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      try {
        await ref.clock.sleep(ref.ttlMs / 3, stopped.signal);
      } catch {
        return;
      }
      const now = ref.clock.now();
      try {
        if (!refreshLease(store, { ...ref, now })) {
          const why = leaseLostReason(store, { ...ref, now }) ?? "the lease could not be refreshed";
          lost.abort(new Error(`lease lost: ${why}`));
          return;
        }
      } catch (error) {
        // A busy store is transient; if it persists the lease expires and the commit refuses to write.
        ref.onError?.(error);
      }
    }
  })();
  return {
    lost: lost.signal,
    stop: () => {
      stopped.abort();
      return loop;
    },
  };
}
