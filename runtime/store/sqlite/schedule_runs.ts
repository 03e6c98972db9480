/**
 * The `schedule_runs` table as a claim register: at most one run per (job, slot) across every process on
 * the store. A claim is an INSERT inside one BEGIN IMMEDIATE transaction (the primary key turns a second
 * claimant away), carries the holder's identity and a lease, and is finished, renewed or taken over only by
 * statements qualified with the holder's nonce. Live rows are found through the partial index
 * `schedule_runs_active`, not the run history.
 */
import type { ProcessIdentity } from "../../core/process_identity.ts";
import type { RunFinish, RunRow, ScheduleOps, SlotClaim } from "../store.ts";
import { claimBatch, claimRow, crashedNote, isStaleClaim } from "../rules.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";
import { HOLDER } from "./_holder.ts";
import { toRunRow } from "./_rows.ts";

const LIVE = "status IN ('running', 'rerunning')";

export function scheduleOps(db: SqliteDb): ScheduleOps {
  return {
    claimSlots: (claims, holder, { now, lease_ms }) =>
      settle(() =>
        db.immediate(() => {
          // Live rows are few (one per running job), so one indexed read serves the whole batch.
          const live = new Map<string, RunRow[]>();
          for (const row of liveClaims(db)) live.set(row.job, [...(live.get(row.job) ?? []), row]);
          return claimBatch(claims, holder, { now, lease_ms, host: db.host }, {
            live,
            queuedOf: (job) => queuedOf(db, job),
          }, {
            insert: (row) => insertRun(db, { job: row.job, slot: row.slot }, holder, row),
            abandon: (row, note) => abandon(db, row, note, now),
            cancel: (row, note) => cancel(db, row, note, now),
          });
        })
      ),
    startQueued: (claims, holder, { now, lease_ms }) =>
      settle(() =>
        db.immediate(() => {
          const started: { job: string; slot: number }[] = [];
          const waiting: { job: string; slot: number }[] = [];
          for (const claim of claims) {
            const row = db.stmt(
              "SELECT status FROM schedule_runs WHERE job = ? AND slot = ? AND holder_nonce = ?",
            ).get(claim.job, claim.slot, holder.nonce) as Row | undefined;
            if (row?.status !== "queued") continue;
            const previous = db.stmt(`SELECT slot FROM schedule_runs WHERE job = ? AND ${LIVE}`)
              .get(claim.job) as Row | undefined;
            if (previous) {
              // Still waiting: its lease is kept fresh here, so other daemons do not take it for stale.
              db.stmt(
                "UPDATE schedule_runs SET lease_expires_at = ? WHERE job = ? AND slot = ? AND holder_nonce = ?",
              ).run(now + lease_ms, claim.job, claim.slot, holder.nonce);
              waiting.push(claim);
              continue;
            }
            db.stmt(
              `UPDATE schedule_runs SET status = 'running', lease_expires_at = ?,
                 note = 'queued (schedule.overlap: queue); started when the previous run ended'
               WHERE job = ? AND slot = ? AND holder_nonce = ? AND status = 'queued'`,
            ).run(now + lease_ms, claim.job, claim.slot, holder.nonce);
            started.push(claim);
          }
          return { started, waiting };
        })
      ),
    recordSkipped: (claim, holder, now) =>
      settle(() =>
        db.immediate(() =>
          insertRun(
            db,
            claim,
            holder,
            claimRow(claim, holder, { status: "skipped", now, lease_ms: 0, note: claim.note ?? null }),
          )
        )
      ),
    liveClaims: () => settle(() => liveClaims(db)),
    takeOverClaim: (row, holder, { now, lease_ms, on_crash = "rerun" }) =>
      settle(() =>
        db.immediate(() => {
          const found = db.stmt(
            `SELECT * FROM schedule_runs WHERE job = ? AND slot = ? AND holder_nonce = ? AND ${LIVE}`,
          ).get(row.job, row.slot, row.holder_nonce) as Row | undefined;
          const current = found && toRunRow(found);
          if (!current || !isStaleClaim(current, { now, host: db.host })) return false;
          const previous = `${current.holder_host}:${current.holder_pid}`;
          interruptSessionsOf(db, current, now);
          if (current.status === "rerunning") {
            abandon(db, current, `holder ${previous} died after taking the slot over; not run again`, now);
            return false;
          }
          if (on_crash === "skip") {
            db.stmt(
              `UPDATE schedule_runs SET status = 'crashed', finished_at = ${END_AT}, lease_expires_at = NULL, note = ?
               WHERE job = ? AND slot = ? AND holder_nonce = ? AND ${LIVE}`,
            ).run(now, current.job, crashedNote(previous), current.job, current.slot, current.holder_nonce);
            return false;
          }
          db.stmt(
            `UPDATE schedule_runs SET status = 'rerunning', ${HOLDER.assign}, lease_expires_at = ?, note = ?
             WHERE job = ? AND slot = ? AND holder_nonce = ?`,
          ).run(
            ...HOLDER.values(holder),
            now + lease_ms,
            `taken over from ${previous}`,
            current.job,
            current.slot,
            current.holder_nonce,
          );
          return true;
        })
      ),
    renewClaims: (holder, { now, lease_ms }) =>
      settle(() =>
        db.immediate(() => {
          db.stmt(`UPDATE schedule_runs SET lease_expires_at = ? WHERE holder_nonce = ? AND ${LIVE}`)
            .run(now + lease_ms, holder.nonce);
          return db.stmt(`SELECT job, slot FROM schedule_runs WHERE holder_nonce = ? AND ${LIVE}`)
            .all(holder.nonce).map((r) => ({ job: String(r.job), slot: Number(r.slot) }));
        })
      ),
    finishRuns: (finishes) =>
      settle(() => db.immediate(() => finishes.map((finish) => finishRun(db, finish)))),
    lastRecordedSlot: (job) =>
      settle(() => {
        const row = db.stmt("SELECT max(slot) AS slot FROM schedule_runs WHERE job = ?").get(job) as Row;
        return row.slot === null ? null : Number(row.slot);
      }),
    recentRuns: (job, limit) =>
      settle(() =>
        (db.stmt("SELECT * FROM schedule_runs WHERE job = ? ORDER BY slot DESC LIMIT ?").all(
          job,
          limit,
        ) as Row[])
          .map(toRunRow)
      ),
  };
}

function liveClaims(db: SqliteDb): RunRow[] {
  return (db.stmt(`SELECT * FROM schedule_runs WHERE ${LIVE}`).all() as Row[]).map(toRunRow);
}

/** INSERT OR IGNORE of one row held by `holder`; false when the slot already has a row. */
function insertRun(
  db: SqliteDb,
  claim: SlotClaim,
  holder: ProcessIdentity,
  row: Pick<RunRow, "status" | "claimed_at" | "lease_expires_at" | "finished_at" | "note">,
): boolean {
  return Number(
    db.stmt(
      `INSERT OR IGNORE INTO schedule_runs (job, slot, status, ${HOLDER.names}, claimed_at, lease_expires_at,
         finished_at, note) VALUES (?, ?, ?, ${HOLDER.placeholders}, ?, ?, ?, ?)`,
    ).run(
      claim.job,
      claim.slot,
      row.status,
      ...HOLDER.values(holder),
      row.claimed_at,
      row.lease_expires_at,
      row.finished_at,
      row.note,
    ).changes,
  ) === 1;
}

/**
 * The sessions of `row`'s job that its dead (or silent) holder left `running`: they are `interrupted`, not
 * running forever. A holder that is alive after all records its own ending over this when it finishes.
 */
function interruptSessionsOf(db: SqliteDb, row: RunRow, now: number): void {
  db.stmt(
    `UPDATE sessions SET status = 'interrupted', terminal_reason = 'holder_died', ended_at = ?, updated_at = ?,
       owner_pid = NULL
     WHERE job = ? AND status = 'running' AND owner_host IS ? AND owner_pid IS ? AND owner_started IS ?`,
  ).run(now, now, row.job, row.holder_host, row.holder_pid, row.holder_started);
}

/** A slot's queued rows (`schedule.overlap: queue`), found by the primary key's job prefix. */
function queuedOf(db: SqliteDb, job: string): RunRow[] {
  return (db.stmt("SELECT * FROM schedule_runs WHERE job = ? AND status = 'queued'").all(job) as Row[])
    .map(toRunRow);
}

/**
 * When a run ends (parameters: now, job): never before a decision the job's history already holds (a slot
 * skipped because the run was still going), whatever the clock read before the write lock was granted.
 */
const END_AT = "max(?, (SELECT coalesce(max(claimed_at), 0) FROM schedule_runs WHERE job = ?))";

/** A live run replaced by a newer slot (`overlap: cancel_previous`); its holder sees the claim gone. */
function cancel(db: SqliteDb, row: RunRow, note: string, now: number): void {
  db.stmt(
    `UPDATE schedule_runs SET status = 'cancelled', finished_at = ${END_AT}, lease_expires_at = NULL, note = ?
     WHERE job = ? AND slot = ? AND holder_nonce = ? AND ${LIVE}`,
  ).run(now, row.job, note, row.job, row.slot, row.holder_nonce);
}

function abandon(db: SqliteDb, row: RunRow, note: string, now: number): void {
  interruptSessionsOf(db, row, now);
  db.stmt(
    `UPDATE schedule_runs SET status = 'abandoned', finished_at = ${END_AT}, note = ?
     WHERE job = ? AND slot = ? AND holder_nonce = ? AND status IN ('running', 'rerunning', 'queued')`,
  ).run(now, row.job, note, row.job, row.slot, row.holder_nonce);
}

/** Records how a run ended; false when its holder no longer owns the claim (it was taken over). */
function finishRun(db: SqliteDb, { claim, holder, outcome }: RunFinish): boolean {
  return Number(
    db.stmt(
      `UPDATE schedule_runs SET status = ?, session_id = ?,
         finished_at = ${END_AT},
         lease_expires_at = NULL, note = coalesce(?, note) WHERE job = ? AND slot = ? AND holder_nonce = ?
         AND status IN ('running', 'rerunning', 'queued')`,
    ).run(
      outcome.status,
      outcome.session_id,
      outcome.now,
      claim.job,
      outcome.note ?? null,
      claim.job,
      claim.slot,
      holder.nonce,
    ).changes,
  ) === 1;
}
