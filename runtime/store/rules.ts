/**
 * Domain rules every store implementation applies inside its operations: when a lease or a slot claim may be
 * taken from its holder, and why a lease no longer belongs to a holder. Pure; callers may use them too.
 */
import { isProvablyDead } from "../core/process_identity.ts";
import type { Lease, LeaseRef, RunRow } from "./store.ts";

/** Why `current` may be taken over at `now` (expired, or its holder is provably dead), or null. */
export function leaseTakeover(current: Lease, now: number): "expired" | "dead_holder" | null {
  if (current.expires_at <= now) return "expired";
  if (isProvablyDead(current.holder)) return "dead_holder";
  return null;
}

/** Why `nonce` does not own an unexpired lease at `now` (`current` is the stored lease), or null when it does. */
export function leaseLostReason(current: Lease | undefined, ref: LeaseRef & { now: number }): string | null {
  if (!current) return "the lease was released or reclaimed by another process";
  if (current.holder.nonce !== ref.nonce) {
    return `the lease was taken over by pid ${current.holder.pid} on ${current.holder.host}`;
  }
  if (current.expires_at <= ref.now) {
    return `the lease expired at ${new Date(current.expires_at).toISOString()}`;
  }
  return null;
}

/** True when a live claim's holder can no longer be running it: lease expired, or provably dead. */
export function isStaleClaim(row: RunRow, now: number): boolean {
  if ((row.lease_expires_at ?? 0) < now) return true;
  return isProvablyDead({
    host: row.holder_host ?? "",
    pid: row.holder_pid ?? 0,
    started: row.holder_started ?? "",
  });
}
