/**
 * Domain rules every store implementation applies inside its operations: when a lease or a slot claim may be
 * taken from its holder, and why a lease no longer belongs to a holder; what a claim writes; how session
 * references resolve; how sessions are grouped for deletion. Pure; callers may use them too.
 */
import { NotFoundError } from "../core/errors.ts";
import { isProvablyDead, type ProcessIdentity } from "../core/process_identity.ts";
import type {
  BusySession,
  ClaimOutcome,
  CompactionKind,
  Lease,
  LeaseRef,
  PassOutcome,
  ResolveOptions,
  RunRow,
  SlotClaim,
} from "./store.ts";

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

/**
 * The row a claim writes, which also stands for it among the job's live (or queued) rows for the rest of
 * its batch: claimed at `now`, leased until `now + lease_ms`; a skipped slot has no lease and ended at once.
 */
export function claimRow(
  claim: SlotClaim,
  holder: ProcessIdentity,
  at: { status: "running" | "queued" | "skipped"; now: number; lease_ms: number; note: string | null },
): RunRow {
  const skipped = at.status === "skipped";
  return {
    job: claim.job,
    slot: claim.slot,
    status: at.status,
    holder_host: holder.host,
    holder_pid: holder.pid,
    holder_started: holder.started,
    holder_nonce: holder.nonce,
    claimed_at: at.now,
    lease_expires_at: skipped ? null : at.now + at.lease_ms,
    finished_at: skipped ? at.now : null,
    session_id: null,
    note: at.note,
  };
}

/**
 * What a backend found for one session reference: for `latest`, the newest unarchived id; else whether the
 * reference is an id, or else up to three ids it is a prefix of.
 */
export type RefLookup =
  | { latest: string | undefined }
  | { exact: true }
  | { prefixed: readonly string[] };

/** The session `ref` names, or why it names none (unknown, ambiguous, no `latest`). */
function refOutcome(ref: string, found: RefLookup): string | { problem: string } {
  if ("latest" in found) {
    return found.latest ?? { problem: `no session "latest": the store has no unarchived sessions` };
  }
  if ("exact" in found) return ref;
  const matches = found.prefixed;
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0 || ref === "") return { problem: `unknown session id "${ref}"` };
  const more = matches.length > 2 ? ", …" : "";
  return { problem: `ambiguous session id prefix "${ref}" (matches ${matches.join(", ")}${more})` };
}

/** `store.resolveSessionId`: the one session `ref` names, or a NotFoundError naming it. */
export function resolvedSessionId(ref: string, found: RefLookup): string {
  const outcome = refOutcome(ref, found);
  if (typeof outcome === "string") return outcome;
  if ("latest" in found) {
    throw new NotFoundError(`Cannot resolve session "latest": the store has no sessions`);
  }
  throw new NotFoundError(`Cannot find session "${ref}": no such session id`);
}

/**
 * `store.resolveSessionIds`: each reference's session once, in order, or one NotFoundError naming every
 * reference that names none.
 */
export function resolvedSessionIds(
  refs: readonly string[],
  found: readonly RefLookup[],
  options: ResolveOptions,
): string[] {
  const ids: string[] = [];
  const problems: string[] = [];
  refs.forEach((ref, i) => {
    const outcome = refOutcome(ref, found[i]!);
    if (typeof outcome !== "string") problems.push(outcome.problem);
    else if (!ids.includes(outcome)) ids.push(outcome);
  });
  if (problems.length > 0) {
    const suffix = options.mutating ? "; nothing was changed" : "";
    throw new NotFoundError(`Cannot ${options.action}: ${problems.join(", ")}${suffix}`);
  }
  return ids;
}

/**
 * Consecutive groups of `ids` holding about `messages` messages each (a bigger session is a group alone),
 * given each session's message count.
 */
export function messageBatches(
  ids: readonly string[],
  counts: ReadonlyMap<string, number>,
  messages: number,
): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const id of ids) {
    const n = counts.get(id) ?? 0;
    if (current.length > 0 && size + n > messages) (groups.push(current), current = [], size = 0);
    current.push(id);
    size += n;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** What a backend does for `claimBatch`: write a row (false: the slot already has one), retire a run. */
export interface ClaimWrites {
  insert(row: RunRow): boolean;
  abandon(row: RunRow, note: string): void;
  cancel(row: RunRow, note: string): void;
}

/**
 * `claimSlots` for every backend: each claim's `slotDecision`, given the job's live rows (`live`, by job)
 * and, for `overlap: queue`, its queued ones (`queuedOf`), with what earlier claims of the batch wrote
 * standing in for them; the writes go through `writes` in decision order.
 */
export function claimBatch(
  claims: readonly SlotClaim[],
  holder: ProcessIdentity,
  at: { now: number; lease_ms: number; host: string },
  state: { live: Map<string, RunRow[]>; queuedOf(job: string): RunRow[] },
  writes: ClaimWrites,
): ClaimOutcome[] {
  const queued = new Map<string, RunRow[]>();
  const queuedOf = (job: string) => queued.get(job) ?? queued.set(job, state.queuedOf(job)).get(job)!;
  const add = (claim: SlotClaim, status: "running" | "skipped" | "queued", note: string | null) => {
    const row = claimRow(claim, holder, { status, now: at.now, lease_ms: at.lease_ms, note });
    return writes.insert(row) ? row : null;
  };
  return claims.map((claim): ClaimOutcome => {
    const decision = slotDecision(state.live.get(claim.job) ?? [], claim.slot, at, {
      ...(claim.overlap ? { overlap: claim.overlap } : {}),
      queued: claim.overlap === "queue" ? queuedOf(claim.job) : [],
    });
    if (decision.action === "taken") return { outcome: "taken" };
    if (decision.action === "overrun") {
      return add(claim, "skipped", decision.note)
        ? { outcome: "overrun", running_slot: decision.running_slot }
        : { outcome: "taken" };
    }
    for (const { row, note } of decision.abandon) writes.abandon(row, note);
    if (decision.action === "queue") {
      const held = add(claim, "queued", decision.note);
      if (!held) return { outcome: "taken" };
      queued.set(claim.job, [held]);
      return { outcome: "queued", running_slot: decision.running_slot };
    }
    if (decision.cancel) writes.cancel(decision.cancel.row, decision.cancel.note);
    const held = add(claim, "running", claim.note ?? null);
    if (!held) return { outcome: "taken" };
    state.live.set(claim.job, [held]);
    const cancelled = decision.cancel?.row;
    return cancelled
      ? { outcome: "claimed", cancelled: { slot: cancelled.slot, holder_nonce: cancelled.holder_nonce } }
      : { outcome: "claimed" };
  });
}
