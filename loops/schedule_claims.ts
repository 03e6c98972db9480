/**
 * The `schedule_runs` table as a claim register: at most one run per (job, slot) across every process on
 * the store. A claim is an INSERT inside one BEGIN IMMEDIATE transaction (the primary key turns a second
 * claimant away), carries the holder's identity and a lease, and is finished, renewed or taken over only
 * by statements qualified with the holder's nonce.
 *
 * Row status: `running` (first attempt) → `rerunning` (taken over once from a dead or silent holder) →
 * `success | failed | limit | interrupted`; `skipped` (overrun, or missed with `catch_up: none`);
 * `abandoned` (its holder died and the slot was superseded, or died again after the takeover).
 */
import { isProvablyDead, type ProcessIdentity } from "../runtime/core/process_identity.ts";
import type { Store } from "../runtime/store/store.ts";

export interface SlotClaim {
  job: string;
  slot: number;
  /** Recorded with the claim, e.g. `catch-up`. */
  note?: string;
}

export type ClaimOutcome =
  | { outcome: "claimed" }
  /** Another claimant holds (or held) this slot. */
  | { outcome: "taken" }
  /** The job's previous run is still going: recorded as `skipped`. */
  | { outcome: "overrun"; running_slot: number };

export interface RunRow {
  job: string;
  slot: number;
  status: string;
  holder_host: string | null;
  holder_pid: number | null;
  holder_started: string | null;
  holder_nonce: string | null;
  claimed_at: number;
  lease_expires_at: number | null;
  finished_at: number | null;
  session_id: string | null;
  note: string | null;
}

const LIVE = "status IN ('running', 'rerunning')";

export interface LeaseOptions {
  now: number;
  lease_ms: number;
}

/** True when a live row's holder can no longer be running it: lease expired, or provably dead. */
export function isStale(row: RunRow, now: number): boolean {
  if ((row.lease_expires_at ?? 0) < now) return true;
  return isProvablyDead({
    host: row.holder_host ?? "",
    pid: row.holder_pid ?? 0,
    started: row.holder_started ?? "",
  });
}

/**
 * Claims due slots in one transaction. A slot whose job still has a live run is recorded as skipped; a
 * stale run of the same job is superseded by the newer slot (marked abandoned).
 */
export function claimSlots(
  store: Store,
  claims: readonly SlotClaim[],
  holder: ProcessIdentity,
  options: LeaseOptions,
): ClaimOutcome[] {
  const { now, lease_ms } = options;
  return store.immediate(() => {
    // Live rows are few (one per running job), so one indexed read serves the whole batch.
    const live = new Map<string, RunRow[]>();
    for (const row of liveClaims(store)) live.set(row.job, [...(live.get(row.job) ?? []), row]);
    const insert = store.stmt(
      `INSERT OR IGNORE INTO schedule_runs (job, slot, status, holder_host, holder_pid, holder_started, holder_nonce,
         claimed_at, lease_expires_at, finished_at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const add = (claim: SlotClaim, status: string, note: string | null) =>
      Number(
        insert.run(
          claim.job,
          claim.slot,
          status,
          holder.host,
          holder.pid,
          holder.started,
          holder.nonce,
          now,
          status === "running" ? now + lease_ms : null,
          status === "running" ? null : now,
          note,
        ).changes,
      ) === 1;
    return claims.map((claim): ClaimOutcome => {
      const rows = live.get(claim.job) ?? [];
      if (rows.some((row) => row.slot === claim.slot)) return { outcome: "taken" };
      const running = rows.find((row) => !isStale(row, now));
      if (running) {
        const note = `overrun: the run of slot ${new Date(running.slot).toISOString()} is still going`;
        return add(claim, "skipped", note)
          ? { outcome: "overrun", running_slot: running.slot }
          : { outcome: "taken" };
      }
      for (const row of rows) {
        abandon(
          store,
          row,
          `holder ${row.holder_host}:${row.holder_pid} died; superseded by a newer slot`,
          now,
        );
      }
      if (!add(claim, "running", claim.note ?? null)) return { outcome: "taken" };
      live.set(claim.job, [heldRow(claim, holder, now + lease_ms)]);
      return { outcome: "claimed" };
    });
  });
}

function heldRow(claim: SlotClaim, holder: ProcessIdentity, leaseExpiresAt: number): RunRow {
  return {
    job: claim.job,
    slot: claim.slot,
    status: "running",
    holder_host: holder.host,
    holder_pid: holder.pid,
    holder_started: holder.started,
    holder_nonce: holder.nonce,
    claimed_at: leaseExpiresAt,
    lease_expires_at: leaseExpiresAt,
    finished_at: null,
    session_id: null,
    note: claim.note ?? null,
  };
}

/** Records a missed slot (`catch_up: none`) without running it; false when the slot already has a row. */
export function recordSkipped(store: Store, claim: SlotClaim, holder: ProcessIdentity, now: number): boolean {
  return store.immediate(() =>
    Number(
      store.stmt(
        `INSERT OR IGNORE INTO schedule_runs (job, slot, status, claimed_at, finished_at, note, holder_host,
           holder_pid, holder_started, holder_nonce) VALUES (?, ?, 'skipped', ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        claim.job,
        claim.slot,
        now,
        now,
        claim.note ?? null,
        holder.host,
        holder.pid,
        holder.started,
        holder.nonce,
      )
        .changes,
    ) === 1
  );
}

/** Every live claim on the store (uses the partial index, not the history). */
export function liveClaims(store: Store): RunRow[] {
  return store.stmt(`SELECT * FROM schedule_runs WHERE ${LIVE}`).all() as unknown as RunRow[];
}

function abandon(store: Store, row: RunRow, note: string, now: number): void {
  store.stmt(
    `UPDATE schedule_runs SET status = 'abandoned', finished_at = ?, note = ?
     WHERE job = ? AND slot = ? AND holder_nonce = ? AND ${LIVE}`,
  ).run(now, note, row.job, row.slot, row.holder_nonce);
}

/**
 * Takes over a stale claim: a `running` row becomes `rerunning` under `holder` (once); a stale `rerunning`
 * row is abandoned. Returns true when `holder` now owns the slot and should run it.
 */
export function takeOver(store: Store, row: RunRow, holder: ProcessIdentity, options: LeaseOptions): boolean {
  const { now, lease_ms } = options;
  return store.immediate(() => {
    const current = store.stmt(
      `SELECT * FROM schedule_runs WHERE job = ? AND slot = ? AND holder_nonce = ? AND ${LIVE}`,
    )
      .get(row.job, row.slot, row.holder_nonce) as unknown as RunRow | undefined;
    if (!current || !isStale(current, now)) return false;
    const previous = `${current.holder_host}:${current.holder_pid}`;
    if (current.status === "rerunning") {
      abandon(store, current, `holder ${previous} died after taking the slot over; not run again`, now);
      return false;
    }
    store.stmt(
      `UPDATE schedule_runs SET status = 'rerunning', holder_host = ?, holder_pid = ?, holder_started = ?,
         holder_nonce = ?, lease_expires_at = ?, note = ? WHERE job = ? AND slot = ? AND holder_nonce = ?`,
    ).run(
      holder.host,
      holder.pid,
      holder.started,
      holder.nonce,
      now + lease_ms,
      `taken over from ${previous}`,
      current.job,
      current.slot,
      current.holder_nonce,
    );
    return true;
  });
}

/** Extends the lease of `holder`'s live claims; returns the (job, slot) keys it still holds. */
export function renewLeases(store: Store, holder: ProcessIdentity, options: LeaseOptions): Set<string> {
  return store.immediate(() => {
    store.stmt(`UPDATE schedule_runs SET lease_expires_at = ? WHERE holder_nonce = ? AND ${LIVE}`)
      .run(options.now + options.lease_ms, holder.nonce);
    const held = store.stmt(`SELECT job, slot FROM schedule_runs WHERE holder_nonce = ? AND ${LIVE}`)
      .all(holder.nonce) as { job: string; slot: number }[];
    return new Set(held.map((r) => claimKey(r.job, Number(r.slot))));
  });
}

/** Records how a run ended; false when `holder` no longer owns the claim (it was taken over). */
export function finishRun(
  store: Store,
  claim: { job: string; slot: number },
  holder: ProcessIdentity,
  outcome: { status: string; session_id: string | null; now: number; note?: string },
): boolean {
  return store.immediate(() =>
    Number(
      store.stmt(
        `UPDATE schedule_runs SET status = ?, session_id = ?, finished_at = ?, lease_expires_at = NULL,
           note = coalesce(?, note) WHERE job = ? AND slot = ? AND holder_nonce = ? AND ${LIVE}`,
      ).run(
        outcome.status,
        outcome.session_id,
        outcome.now,
        outcome.note ?? null,
        claim.job,
        claim.slot,
        holder.nonce,
      ).changes,
    ) === 1
  );
}

/** The latest slot with any row for `job` (claimed, skipped or finished), or null. */
export function lastRecordedSlot(store: Store, job: string): number | null {
  const row = store.stmt("SELECT max(slot) AS slot FROM schedule_runs WHERE job = ?").get(job) as {
    slot: number | null;
  };
  return row.slot === null ? null : Number(row.slot);
}

export function recentRuns(store: Store, job: string, limit: number): RunRow[] {
  return store.stmt("SELECT * FROM schedule_runs WHERE job = ? ORDER BY slot DESC LIMIT ?").all(
    job,
    limit,
  ) as unknown as RunRow[];
}

export function claimKey(job: string, slot: number): string {
  return `${job}\u0000${slot}`;
}
