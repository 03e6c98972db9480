/**
 * The `schedule_runs` table as a claim register: at most one run per (job, slot) across every daemon on
 * every host. Each operation that decides about a job's runs first takes a transaction-scoped advisory lock
 * per job (in name order, so two batches never deadlock), which serialises them per job the way SQLite's
 * single writer does; the primary key and `ON CONFLICT DO NOTHING` turn away any claimant that did not lock.
 * A batch of claims costs the same few statements whatever its size. Everything after a claim is qualified by
 * the holder's nonce. Live rows are found through the partial index `schedule_runs_active`.
 */
import type { ProcessIdentity } from "../../core/process_identity.ts";
import type { RunFinish, RunRow, ScheduleOps, SlotClaim } from "../store.ts";
import { claimBatch, claimRow, crashedNote, isStaleClaim } from "../rules.ts";
import { json, type PgDb, type Q } from "./_db.ts";
import { toRunRow } from "./_rows.ts";

type NewRun = Pick<
  RunRow,
  "job" | "slot" | "status" | "claimed_at" | "lease_expires_at" | "finished_at" | "note"
>;

export function scheduleOps(db: PgDb): ScheduleOps {
  const { sql } = db;
  return {
    claimSlots: (claims, holder, { now, lease_ms }) =>
      claims.length === 0 ? Promise.resolve([]) : db.tx(async (q) => {
        const jobs = [...new Set(claims.map((c) => c.job))];
        // Pipelined on the transaction's connection: the server runs them in order, the locks first.
        const queueJobs = [...new Set(claims.filter((c) => c.overlap === "queue").map((c) => c.job))];
        const [, liveRows, taken, queuedRows] = await Promise.all([
          lockJobs(q, jobs),
          liveClaims(q, jobs),
          recordedSlots(q, claims),
          queueJobs.length ? queuedOf(q, queueJobs) : Promise.resolve([]),
        ]);
        const queued = new Map<string, RunRow[]>();
        for (const row of queuedRows) queued.set(row.job, [...(queued.get(row.job) ?? []), row]);
        const live = new Map<string, RunRow[]>();
        for (const row of liveRows) live.set(row.job, [...(live.get(row.job) ?? []), row]);
        const inserts: RunRow[] = [];
        const abandons: { row: RunRow; note: string }[] = [];
        const cancels: { row: RunRow; note: string }[] = [];
        const outcomes = claimBatch(claims, holder, { now, lease_ms, host: db.host }, {
          live,
          queuedOf: (job) => queued.get(job) ?? [],
        }, {
          insert(row) {
            const key = slotKey(row);
            if (taken.has(key)) return false;
            taken.add(key);
            inserts.push(row);
            return true;
          },
          abandon: (row, note) => abandons.push({ row, note }),
          cancel: (row, note) => cancels.push({ row, note }),
        });
        for (const { row, note } of abandons) await abandon(q, row, note, now);
        const inserted = await insertRuns(q, holder, inserts);
        // After the inserts: the run a claim cancels may be one an earlier claim of this batch made.
        for (const { row, note } of cancels) {
          await q`
            UPDATE schedule_runs SET status = 'cancelled', finished_at = ${
            endAt(q, row.job, now)
          }, lease_expires_at = NULL,
              note = ${note}
            WHERE job = ${row.job} AND slot = ${row.slot} AND holder_nonce = ${row.holder_nonce}
              AND status IN ('running', 'rerunning')`;
        }
        // Under the job locks every insert succeeds; one that did not lost to a claimant that did not lock.
        return outcomes.map((outcome, i) =>
          outcome.outcome !== "taken" && !inserted.has(slotKey(claims[i]!)) ? { outcome: "taken" } : outcome
        );
      }),
    recordSkipped: (claim, holder, now) =>
      db.tx(async (q) => {
        await lockJobs(q, [claim.job]);
        const inserted = await insertRuns(q, holder, [
          claimRow(claim, holder, { status: "skipped", now, lease_ms: 0, note: claim.note ?? null }),
        ]);
        return inserted.size === 1;
      }),
    liveClaims: () => liveClaims(sql),
    takeOverClaim: (row, holder, { now, lease_ms, on_crash = "rerun" }) =>
      db.tx(async (q) => {
        await lockJobs(q, [row.job]);
        const [found] = await q`
          SELECT * FROM schedule_runs WHERE job = ${row.job} AND slot = ${row.slot}
            AND holder_nonce = ${row.holder_nonce} AND status IN ('running', 'rerunning')`;
        const current = found && toRunRow(found);
        if (!current || !isStaleClaim(current, { now, host: db.host })) return false;
        const previous = `${current.holder_host}:${current.holder_pid}`;
        await interruptSessionsOf(q, current, now);
        if (current.status === "rerunning") {
          await abandon(q, current, `holder ${previous} died after taking the slot over; not run again`, now);
          return false;
        }
        if (on_crash === "skip") {
          await q`
            UPDATE schedule_runs SET status = 'crashed', finished_at = ${
            endAt(q, current.job, now)
          }, lease_expires_at = NULL,
              note = ${crashedNote(previous)}
            WHERE job = ${current.job} AND slot = ${current.slot} AND holder_nonce = ${current.holder_nonce}
              AND status IN ('running', 'rerunning')`;
          return false;
        }
        await q`
          UPDATE schedule_runs SET status = 'rerunning', holder_host = ${holder.host}, holder_pid = ${holder.pid},
            holder_started = ${holder.started}, holder_nonce = ${holder.nonce}, lease_expires_at = ${
          now + lease_ms
        },
            note = ${`taken over from ${previous}`}
          WHERE job = ${current.job} AND slot = ${current.slot} AND holder_nonce = ${current.holder_nonce}`;
        return true;
      }),
    startQueued: (claims, holder, { now, lease_ms }) =>
      claims.length === 0 ? Promise.resolve({ started: [], waiting: [] }) : db.tx(async (q) => {
        await lockJobs(q, [...new Set(claims.map((c) => c.job))]);
        const started: { job: string; slot: number }[] = [];
        const waiting: { job: string; slot: number }[] = [];
        for (const claim of claims) {
          const [row] = await q`
            SELECT status FROM schedule_runs
            WHERE job = ${claim.job} AND slot = ${claim.slot} AND holder_nonce = ${holder.nonce}`;
          if (row?.status !== "queued") continue;
          if ((await liveClaims(q, [claim.job])).length > 0) {
            // Still waiting: its lease is kept fresh here, so other daemons do not take it for stale.
            await q`
              UPDATE schedule_runs SET lease_expires_at = ${now + lease_ms}
              WHERE job = ${claim.job} AND slot = ${claim.slot} AND holder_nonce = ${holder.nonce}`;
            waiting.push(claim);
            continue;
          }
          await q`
            UPDATE schedule_runs SET status = 'running', lease_expires_at = ${now + lease_ms},
              note = 'queued (schedule.overlap: queue); started when the previous run ended'
            WHERE job = ${claim.job} AND slot = ${claim.slot} AND holder_nonce = ${holder.nonce}
              AND status = 'queued'`;
          started.push(claim);
        }
        return { started, waiting };
      }),
    async renewClaims(holder, { now, lease_ms }) {
      const rows = await sql`
        WITH renewed AS (
          UPDATE schedule_runs SET lease_expires_at = ${now + lease_ms}
          WHERE holder_nonce = ${holder.nonce} AND status IN ('running', 'rerunning')
          RETURNING job, slot
        )
        SELECT job, slot FROM renewed ORDER BY job, slot`;
      return rows.map((r) => ({ job: String(r.job), slot: Number(r.slot) }));
    },
    finishRuns: (finishes) =>
      finishes.length === 0 ? Promise.resolve([]) : db.tx(async (q) => {
        // Under the job locks, so a claim that saw the run still going is ordered before its finish.
        await lockJobs(q, [...new Set(finishes.map((f) => f.claim.job))]);
        const done: boolean[] = [];
        for (const finish of finishes) done.push(await finishRun(q, finish));
        return done;
      }),
    async lastRecordedSlot(job) {
      const [row] = await sql`SELECT max(slot) AS slot FROM schedule_runs WHERE job = ${job}`;
      return row?.slot === null || row?.slot === undefined ? null : Number(row.slot);
    },
    async recentRuns(job, limit) {
      const rows =
        await sql`SELECT * FROM schedule_runs WHERE job = ${job} ORDER BY slot DESC LIMIT ${limit}`;
      return rows.map(toRunRow);
    },
  };
}

/** Transaction-scoped advisory locks on `jobs` of this store (schema), taken in name order. */
async function lockJobs(q: Q, jobs: readonly string[]): Promise<void> {
  await q`
    SELECT count(pg_advisory_xact_lock(hashtextextended(current_schema() || ':schedule:' || job, 0)))
    FROM (SELECT value AS job FROM jsonb_array_elements_text(${
    json(q, [...jobs].sort())
  }) ORDER BY 1) AS jobs`;
}

async function liveClaims(q: Q, jobs?: readonly string[]): Promise<RunRow[]> {
  const rows = jobs
    ? await q`
      SELECT * FROM schedule_runs WHERE status IN ('running', 'rerunning')
        AND job IN (SELECT value FROM jsonb_array_elements_text(${json(q, jobs)}))`
    : await q`SELECT * FROM schedule_runs WHERE status IN ('running', 'rerunning')`;
  return rows.map(toRunRow);
}

/** The queued rows (`schedule.overlap: queue`) of `jobs`, found by the primary key's job prefix. */
async function queuedOf(q: Q, jobs: readonly string[]): Promise<RunRow[]> {
  const rows = await q`
    SELECT * FROM schedule_runs WHERE status = 'queued'
      AND job IN (SELECT value FROM jsonb_array_elements_text(${json(q, jobs)}))`;
  return rows.map(toRunRow);
}

const slotKey = (claim: { job: string; slot: number }) => `${claim.slot} ${claim.job}`;

/** The (job, slot) pairs among `claims` that already have a row, of any status. */
async function recordedSlots(q: Q, claims: readonly SlotClaim[]): Promise<Set<string>> {
  const rows = await q`
    SELECT r.job, r.slot FROM schedule_runs r
    JOIN jsonb_to_recordset(${
    json(q, claims.map(({ job, slot }) => ({ job, slot })))
  }) AS c(job text, slot bigint)
      ON r.job = c.job AND r.slot = c.slot`;
  return new Set(rows.map((r) => slotKey({ job: String(r.job), slot: Number(r.slot) })));
}

/** Inserts the runs held by `holder` (existing slots are left alone); returns the keys inserted. */
async function insertRuns(q: Q, holder: ProcessIdentity, runs: readonly NewRun[]): Promise<Set<string>> {
  if (runs.length === 0) return new Set();
  const rows = await q`
    INSERT INTO schedule_runs (job, slot, status, holder_host, holder_pid, holder_started, holder_nonce,
      claimed_at, lease_expires_at, finished_at, note)
    SELECT r.job, r.slot, r.status, ${holder.host}::text, ${holder.pid}::integer, ${holder.started}::text,
      ${holder.nonce}::text, r.claimed_at, r.lease_expires_at, r.finished_at, r.note
    FROM jsonb_to_recordset(${json(q, runs)}) AS r(job text, slot bigint, status text, claimed_at bigint,
      lease_expires_at bigint, finished_at bigint, note text)
    ON CONFLICT (job, slot) DO NOTHING
    RETURNING job, slot`;
  return new Set(rows.map((r) => slotKey({ job: String(r.job), slot: Number(r.slot) })));
}

/**
 * The sessions of `row`'s job that its dead (or silent) holder left `running`: they are `interrupted`, not
 * running forever. A holder that is alive after all records its own ending over this when it finishes.
 */
async function interruptSessionsOf(q: Q, row: RunRow, now: number): Promise<void> {
  await q`
    UPDATE sessions SET status = 'interrupted', terminal_reason = 'holder_died', ended_at = ${now},
      updated_at = ${now}, owner_pid = NULL
    WHERE job = ${row.job} AND status = 'running'
      AND owner_host IS NOT DISTINCT FROM ${row.holder_host}::text
      AND owner_pid IS NOT DISTINCT FROM ${row.holder_pid}::integer
      AND owner_started IS NOT DISTINCT FROM ${row.holder_started}::text`;
}

/**
 * When a run of `job` ends: `now`, but never before a decision the job's history already holds (a slot
 * skipped because this run was still going). `now` was read before the job's lock was granted, and another
 * host may have decided in between.
 */
function endAt(q: Q, job: string, now: number) {
  return q`greatest(${now}::bigint, (SELECT coalesce(max(claimed_at), 0) FROM schedule_runs WHERE job = ${job}))`;
}

async function abandon(q: Q, row: RunRow, note: string, now: number): Promise<void> {
  await interruptSessionsOf(q, row, now);
  await q`
    UPDATE schedule_runs SET status = 'abandoned', finished_at = ${endAt(q, row.job, now)}, note = ${note}
    WHERE job = ${row.job} AND slot = ${row.slot} AND holder_nonce = ${row.holder_nonce}
      AND status IN ('running', 'rerunning', 'queued')`;
}

/**
 * Records how a run ended; false when its holder no longer owns the claim (it was taken over). The end is
 * never recorded before a decision the job's history already holds (a slot skipped because this run was
 * still going), whatever the finishing host's clock read before it got the lock.
 */
async function finishRun(q: Q, { claim, holder, outcome }: RunFinish): Promise<boolean> {
  const result = await q`
    UPDATE schedule_runs SET status = ${outcome.status}, session_id = ${outcome.session_id},
      finished_at = ${endAt(q, claim.job, outcome.now)}, lease_expires_at = NULL, note = coalesce(${
    outcome.note ?? null
  }::text, note)
    WHERE job = ${claim.job} AND slot = ${claim.slot} AND holder_nonce = ${holder.nonce}
      AND status IN ('running', 'rerunning', 'queued')`;
  return result.count === 1;
}
