/**
 * Domain rules every store implementation applies inside its operations: when a lease or a slot claim may be
 * taken from its holder, and why a lease no longer belongs to a holder. Pure; callers may use them too.
 */
import { isProvablyDead, type ProcessIdentity } from "../core/process_identity.ts";
import type { BusySession, CompactionKind, Lease, LeaseRef, PassOutcome, RunRow } from "./store.ts";

/**
 * Why `current` may be taken over at `now` by a process on `host` (expired, or its holder is provably dead),
 * or null.
 */
export function leaseTakeover(
  current: Lease,
  at: { now: number; host: string },
): "expired" | "dead_holder" | null {
  if (current.expires_at <= at.now) return "expired";
  if (isProvablyDead(current.holder, at.host)) return "dead_holder";
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

/**
 * True when a live claim's holder can no longer be running it, as judged at `now` on `host`: lease expired,
 * or provably dead.
 */
export function isStaleClaim(row: RunRow, at: { now: number; host: string }): boolean {
  if ((row.lease_expires_at ?? 0) < at.now) return true;
  return isProvablyDead({
    host: row.holder_host ?? "",
    pid: row.holder_pid ?? 0,
    started: row.holder_started ?? "",
  }, at.host);
}

/**
 * Why each of `ids` is in use, for every backend: its owner (a run, a daemon loop) or the holder of an
 * unexpired compaction lease, unless provably dead on `host`. Sessions in use by nobody are left out.
 */
export function busyReasons(
  ids: readonly string[],
  found: {
    owners: readonly { id: string; holder: ProcessIdentity }[];
    leases: readonly { session_id: string; holder: ProcessIdentity; expires_at: number }[];
  },
  host: string,
): BusySession[] {
  const busy = new Map<string, string>();
  for (const { id, holder } of found.owners) {
    if (!isProvablyDead(holder, host)) busy.set(id, `running in pid ${holder.pid} on ${holder.host}`);
  }
  for (const { session_id: id, holder, expires_at } of found.leases) {
    if (isProvablyDead(holder, host)) continue;
    const compacting = `compacting in pid ${holder.pid} on ${holder.host}, lease until ${
      new Date(expires_at).toISOString()
    }`;
    busy.set(id, busy.has(id) ? `${busy.get(id)}; ${compacting}` : compacting);
  }
  return ids.filter((id) => busy.has(id)).map((id) => ({ id, reason: busy.get(id)! }));
}

/** What a claim of one (job, slot) does, given the job's live claims. */
export type SlotDecision =
  | { action: "taken" }
  /** Recorded `skipped`: the previous run goes on (`overlap: skip`, or a slot is already queued). */
  | { action: "overrun"; running_slot: number; note: string }
  /** Recorded `queued` (`overlap: queue`): it starts once the previous run ends; `abandon` as for a claim. */
  | { action: "queue"; running_slot: number; note: string; abandon: { row: RunRow; note: string }[] }
  /**
   * Claimed. `abandon`: stale claims superseded; `cancel`: the live run it replaces (`overlap:
   * cancel_previous`), recorded `cancelled` and interrupted by its holder.
   */
  | {
    action: "claim";
    abandon: { row: RunRow; note: string }[];
    cancel?: { row: RunRow; note: string };
  };

/** What a daemon does with a slot that comes due while the job's previous run is still going. */
export type Overlap = "skip" | "queue" | "cancel_previous";

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The rule of `claimSlots`, for every backend: a slot already claimed is taken; a live run of the job
 * (holder not stale) makes the slot an overlap, settled by `overlap` — skipped (default), queued (at most one
 * per job: a slot due while one is queued is skipped) or claimed with the live run cancelled; otherwise the
 * slot is claimed, and the job's stale claims (live or queued) are abandoned as superseded.
 */
export function slotDecision(
  live: readonly RunRow[],
  slot: number,
  at: { now: number; host: string },
  options: { overlap?: Overlap; queued?: readonly RunRow[] } = {},
): SlotDecision {
  const queued = options.queued ?? [];
  if (live.some((row) => row.slot === slot) || queued.some((row) => row.slot === slot)) {
    return { action: "taken" };
  }
  const overlap = options.overlap ?? "skip";
  const running = live.find((row) => !isStaleClaim(row, at));
  const waiting = queued.find((row) => !isStaleClaim(row, at));
  const abandon = [
    ...live.filter((row) => row !== running).map((row) => ({
      row,
      note: `holder ${row.holder_host}:${row.holder_pid} died; superseded by a newer slot`,
    })),
    ...queued.filter((row) => row !== waiting).map((row) => ({
      row,
      note: `holder ${row.holder_host}:${row.holder_pid} died while the slot was queued; superseded`,
    })),
  ];
  if (overlap === "queue" && waiting) {
    return {
      action: "overrun",
      running_slot: running?.slot ?? waiting.slot,
      note: `overrun: slot ${iso(waiting.slot)} is already queued (schedule.overlap: queue)`,
    };
  }
  if (!running) return { action: "claim", abandon };
  if (overlap === "queue") {
    return {
      action: "queue",
      running_slot: running.slot,
      note: `queued: the run of slot ${iso(running.slot)} is still going (schedule.overlap: queue)`,
      abandon,
    };
  }
  if (overlap === "cancel_previous") {
    return {
      action: "claim",
      abandon,
      cancel: {
        row: running,
        note: `cancelled: slot ${iso(slot)} came due while it ran (schedule.overlap: cancel_previous)`,
      },
    };
  }
  return {
    action: "overrun",
    running_slot: running.slot,
    note: `overrun: the run of slot ${iso(running.slot)} is still going`,
  };
}

/** A session's running compaction totals, carried on every compaction-log row. */
export interface PassTotals {
  total_passes: number;
  total_committed: number;
  /** Committed hard compactions (kind `summarize`). */
  total_hard: number;
  /** Sum of before − after over committed passes (negative when passes grew the transcript). */
  total_saved_tokens: number;
}

export const NO_TOTALS: Readonly<PassTotals> = {
  total_passes: 0,
  total_committed: 0,
  total_hard: 0,
  total_saved_tokens: 0,
};

/** The totals after one more pass. */
export function nextTotals(
  previous: Readonly<PassTotals>,
  pass: { kind: CompactionKind; outcome: PassOutcome; before: number; after: number },
): PassTotals {
  const committed = pass.outcome === "committed";
  return {
    total_passes: previous.total_passes + 1,
    total_committed: previous.total_committed + (committed ? 1 : 0),
    total_hard: previous.total_hard + (committed && pass.kind === "summarize" ? 1 : 0),
    total_saved_tokens: previous.total_saved_tokens + (committed ? pass.before - pass.after : 0),
  };
}

/** Tokens after a pass as a share of the compaction threshold; null when the threshold is unknown. */
export function occupancyOf(afterTokens: number, thresholdTokens: number | null | undefined): number | null {
  return thresholdTokens ? afterTokens / thresholdTokens : null;
}

/**
 * May `holder` claim a session owned by `owner` (claimSession)? Whatever the session's status: yes when
 * nobody owns it (a run that ends clears its owner), when `holder` owns it already, or when the owner is
 * provably dead on `host`. A finished session with an owner is being resumed by that owner right now: its
 * status changes only after the claim, so status cannot decide.
 */
export function claimable(
  owner: { host: string; pid: number; started: string } | null,
  who: {
    holder: { host: string; pid: number; started: string };
    host: string;
    /** The owner's renewal expiry (null: it has none) and the time now: an overdue owner is stalled. */
    owner_expires_at?: number | null;
    now?: number;
  },
): boolean {
  if (owner === null) return true;
  const { holder } = who;
  if (owner.host === holder.host && owner.pid === holder.pid && owner.started === holder.started) return true;
  if (isStalledOwner(who.owner_expires_at, who.now)) return true;
  return isProvablyDead(owner, who.host);
}

/**
 * An owner whose renewal is overdue (runtime/session/owner_lease.ts): alive or not, it has stopped writing,
 * and its session may be taken over. An owner without an expiry is judged by its pid alone.
 */
export function isStalledOwner(expiresAt: number | null | undefined, now: number | undefined): boolean {
  return expiresAt !== null && expiresAt !== undefined && now !== undefined && expiresAt < now;
}

/** The note of a slot whose holder died mid-run and that is not run again (`schedule.on_crash: skip`). */
export function crashedNote(previous: string): string {
  return `holder ${previous} died mid-run; not run again (schedule.on_crash: skip)`;
}
