/**
 * The `runs` table as a queue across every worker on every host. A claim takes its candidates with
 * `FOR UPDATE SKIP LOCKED` (two workers never wait for, or take, the same row), and decides group limits and
 * `queue.max_running` under transaction-scoped advisory locks: one per group (tried, never waited for: a
 * group another worker is deciding about is left to it this time) and one for the store-wide cap (waited
 * for), so a count and the claims it allows are one atomic decision. Everything after a claim is qualified
 * by the worker's nonce. Submits, cancels and ends `NOTIFY hermes_runs`, which wakes idle workers.
 */
import { NotFoundError } from "../../core/errors.ts";
import type { QueuedRun, RunQueueOps } from "../store.ts";
import { newRunId } from "../ids.ts";
import { isStaleRun, pickClaims, recovery, resolvedRunId, toDelivery, toQueuedRun } from "../_run_queue.ts";
import type { PgDb, Q } from "./_db.ts";

export const RUNS_CHANNEL = "hermes_runs";
/** Appended events, by run id: event streams on any server listen; workers do not. */
export const RUN_EVENTS_CHANNEL = "hermes_run_events";

const lockKey = (q: Q, key: string) => q`hashtextextended(${`hermes:queue:${key}`}::text, 0)`;

export function runQueueOps(db: PgDb): RunQueueOps {
  const { sql } = db;
  // Whether a running run holds a pending approval: read by the public reads (it shows waiting_approval).
  const waiting = (q: Q) =>
    q`EXISTS (SELECT 1 FROM approvals a WHERE a.run_id = runs.id AND a.status = 'pending')`;
  const get = async (q: Q, id: string): Promise<QueuedRun | undefined> => {
    const [row] = await q`SELECT runs.*, ${waiting(q)} AS waiting_approval FROM runs WHERE id = ${id}`;
    return row && toQueuedRun(row);
  };
  const notify = (q: Q, id: string) => q`SELECT pg_notify(${RUNS_CHANNEL}, ${id})`;
  return {
    submitRun: (run) =>
      db.tx(async (q) => {
        const id = run.id ?? newRunId(run.now);
        if (run.cancel_in_progress && run.group) {
          await q`
            UPDATE runs SET status = 'cancelled', finished_at = ${run.now}, notify_pending = true,
              note = ${`cancelled: run ${id} of the same group was submitted (cancel_in_progress)`}
            WHERE group_key = ${run.group} AND status = 'queued'`;
          await q`UPDATE runs SET cancel_requested = true WHERE group_key = ${run.group} AND status = 'running'`;
        }
        const inserted = await q`
          INSERT INTO runs (id, job, job_path, job_snapshot, inputs, key, priority, not_before, status, on_crash,
            group_key, group_limit, model, labels, triggered_by, pinned_to, submitted_at)
          VALUES (${id}, ${run.job}, ${run.job_path}, ${run.job_snapshot}, ${JSON.stringify(run.inputs)},
            ${run.key ?? null}, ${run.priority ?? 0}, ${run.not_before ?? null}, 'queued', ${
          run.on_crash ?? "skip"
        }, ${run.group ?? null}, ${run.group_limit ?? null}, ${run.model ?? null},
            ${JSON.stringify(run.labels ?? {})}, ${run.trigger ?? "cli"},
            ${run.pinned_to ?? null}, ${run.now})
          ON CONFLICT (key) DO NOTHING
          RETURNING *`;
        if (inserted.length === 1) {
          await notify(q, id);
          return { run: toQueuedRun(inserted[0]!), deduplicated: false };
        }
        // The key is taken (a cancel_in_progress above is undone with the transaction: nothing was submitted).
        const [row] = await q`SELECT * FROM runs WHERE key = ${run.key!}`;
        if (run.cancel_in_progress) throw new Deduplicated(toQueuedRun(row!));
        return { run: toQueuedRun(row!), deduplicated: true };
      }).catch((error) => {
        if (error instanceof Deduplicated) return { run: error.run, deduplicated: true };
        throw error;
      }),
    getRun: (id) => get(sql, id),
    resolveRunId: async (ref) => {
      const rows = await sql`
        SELECT id FROM runs WHERE id = ${ref}
        UNION ALL (SELECT id FROM runs WHERE id >= ${ref} AND id < ${ref + "\uffff"} ORDER BY id LIMIT 3)`;
      const ids = rows.map((r) => String(r.id));
      return resolvedRunId(ref, ids.includes(ref), [...new Set(ids)]);
    },
    listRuns: async (options = {}) => {
      const before = options.before;
      const labels = Object.entries(options.labels ?? {}).reduce(
        (filter, [key, value]) => sql`${filter} AND (labels::jsonb ->> ${key}) = ${value}`,
        sql``,
      );
      const rows = await sql`
        SELECT runs.*, ${waiting(sql)} AS waiting_approval FROM runs WHERE true
          ${
        options.status === "waiting_approval"
          ? sql`AND status = 'running' AND ${waiting(sql)}`
          : options.status === "running"
          ? sql`AND status = 'running' AND NOT ${waiting(sql)}`
          : options.status
          ? sql`AND status = ${options.status}`
          : sql``
      }
          ${options.job ? sql`AND job = ${options.job}` : sql``}
          ${options.since !== undefined ? sql`AND submitted_at >= ${options.since}` : sql``}
          ${options.until !== undefined ? sql`AND submitted_at < ${options.until}` : sql``}
          ${before ? sql`AND (submitted_at, id) < (${before.submitted_at}, ${before.id})` : sql``}
          ${labels}
          ${options.key ? sql`AND key = ${options.key}` : sql``}
        ORDER BY submitted_at DESC, id DESC
        ${options.limit !== undefined ? sql`LIMIT ${options.limit}` : sql``}`;
      return rows.map(toQueuedRun);
    },
    claimRuns: ({ holder, now, lease_ms, max, max_running, pinned }) =>
      max <= 0 ? Promise.resolve([]) : db.tx(async (q) => {
        const due = q`status = 'queued' AND (not_before IS NULL OR not_before <= ${now})
          AND (model IS NULL OR model NOT IN (SELECT model FROM model_holds WHERE until > ${now}))
          AND ${
          pinned === "only"
            ? q`pinned_to = ${holder.nonce}`
            : pinned === "none"
            ? q`pinned_to IS NULL`
            : q`(pinned_to IS NULL OR pinned_to = ${holder.nonce})`
        }
          AND (group_key IS NULL OR group_limit IS NULL OR group_limit > (SELECT count(*) FROM runs r
            WHERE r.status = 'running' AND r.group_key = runs.group_key))`;
        const claim = q`status = 'running', holder_host = ${holder.host}, holder_pid = ${holder.pid},
          holder_started = ${holder.started}, holder_nonce = ${holder.nonce}, lease_expires_at = ${
          now + lease_ms
        }, attempts = attempts + 1, started_at = ${now}, session_id = NULL`;
        if (max_running === undefined || max_running === null) {
          // The common case in one statement: the first runs due, taken as they are unless one of them
          // belongs to a limited group (whose count needs its lock: the full path below, same transaction).
          const rows = await q`
            WITH c AS (
              SELECT id, (group_key IS NOT NULL AND group_limit IS NOT NULL) AS grouped FROM runs
              WHERE ${due} ORDER BY priority DESC, submitted_at, id LIMIT ${max} FOR UPDATE SKIP LOCKED),
            g AS (SELECT coalesce(bool_or(grouped), false) AS grouped FROM c),
            u AS (
              UPDATE runs SET ${claim}
              WHERE id IN (SELECT id FROM c) AND status = 'queued' AND NOT (SELECT grouped FROM g)
              RETURNING *)
            SELECT g.grouped AS claim_grouped, u.* FROM g LEFT JOIN u ON true`;
          if (rows[0]?.claim_grouped !== true) {
            return rows.filter((r) => r.id != null).map(toQueuedRun).sort(claimOrder);
          }
        }
        let room = Infinity;
        if (max_running !== undefined && max_running !== null) {
          await q`SELECT pg_advisory_xact_lock(${lockKey(q, "max_running")})`;
          const [row] = await q`SELECT count(*)::int AS n FROM runs WHERE status = 'running'`;
          room = Math.max(0, max_running - Number(row!.n));
          if (room === 0) return [];
        }
        const candidates = (await q`
          SELECT * FROM runs WHERE ${due}
          ORDER BY priority DESC, submitted_at, id
          LIMIT ${Math.min(max, room) * 2 + 8}
          FOR UPDATE SKIP LOCKED`).map(toQueuedRun);
        // Each group is counted under its lock (after another worker's claims in it committed).
        const groups = [
          ...new Set(candidates.flatMap((r) => r.group_limit !== null && r.group ? [r.group] : [])),
        ];
        const counts = new Map<string, number>();
        for (const group of groups.sort()) {
          const [row] = await q`
            SELECT pg_try_advisory_xact_lock(${lockKey(q, `group:${group}`)}) AS locked,
              (SELECT count(*)::int FROM runs WHERE status = 'running' AND group_key = ${group}) AS n`;
          // Not locked: another worker is deciding about this group now; leave its runs to it.
          counts.set(group, row!.locked ? Number(row!.n) : Infinity);
        }
        const picked = pickClaims(candidates, { max, room, running: (group) => counts.get(group) ?? 0 });
        if (picked.length === 0) return [];
        const rows = await q`
          UPDATE runs SET ${claim}
          WHERE id IN (SELECT jsonb_array_elements_text(${q.json(picked.map((r) => r.id))}))
            AND status = 'queued'
          RETURNING *`;
        const byId = new Map(rows.map((r) => [String(r.id), toQueuedRun(r)]));
        return picked.flatMap((r) => byId.has(r.id) ? [byId.get(r.id)!] : []);
      }),
    pinRun: async (id, nonce) =>
      (await sql`UPDATE runs SET pinned_to = ${nonce} WHERE id = ${id} AND status = 'queued' RETURNING id`)
        .length === 1,
    setRunSession: async (id, holder, sessionId) => {
      const rows = await sql`
        UPDATE runs SET session_id = ${sessionId}
        WHERE id = ${id} AND holder_nonce = ${holder.nonce} AND status = 'running' RETURNING id`;
      return rows.length === 1;
    },
    renewRuns: async (holder, { now, lease_ms }) => {
      const rows = await sql`
        UPDATE runs SET lease_expires_at = ${now + lease_ms}
        WHERE holder_nonce = ${holder.nonce} AND status = 'running' RETURNING id, cancel_requested`;
      return {
        held: rows.map((r) => String(r.id)),
        cancel: rows.filter((r) => r.cancel_requested === true).map((r) => String(r.id)),
      };
    },
    cancelRequests: async (holder) =>
      (await sql`
        SELECT id FROM runs WHERE holder_nonce = ${holder.nonce} AND status = 'running' AND cancel_requested`)
        .map((r) => String(r.id)),
    finishRun: (end) =>
      numberingAgain(() =>
        db.tx(async (q) => {
          // The run's last events go out with its end, in one transaction and one round trip.
          const stored = end.events?.length ? insertEvents(q, end.id, end.events).execute() : undefined;
          stored?.catch(() => {}); // awaited below; the end's statement reports a failure first
          // The end and its notification in one statement.
          const rows = await q`
          WITH u AS (
            UPDATE runs SET status = ${end.status}, session_id = coalesce(${end.session_id}, session_id),
              result = ${end.result === undefined || end.result === null ? null : JSON.stringify(end.result)},
              exit_code = ${end.exit_code}, finished_at = ${end.now}, lease_expires_at = NULL,
              note = coalesce(${end.note ?? null}, note)
            WHERE id = ${end.id} AND holder_nonce = ${end.holder.nonce} AND status = 'running'
            RETURNING id)
          SELECT id, pg_notify(${RUNS_CHANNEL}, id) FROM u`;
          await stored;
          return rows.length === 1;
        }, async (q) => {
          const [row] = await q`SELECT holder_nonce, status FROM runs WHERE id = ${end.id}`;
          return row?.holder_nonce === end.holder.nonce && row?.status === end.status;
        })
      ),
    cancelRun: (id, now) =>
      db.tx(async (q) => {
        await q`
          UPDATE runs SET status = 'cancelled', finished_at = ${now}, note = 'cancelled before it started',
            notify_pending = true
          WHERE id = ${id} AND status = 'queued'`;
        await q`UPDATE runs SET cancel_requested = true WHERE id = ${id} AND status = 'running'`;
        const run = await get(q, id);
        if (!run) throw new NotFoundError(`Cannot cancel run "${id}": no such run id`);
        await notify(q, id);
        return run;
      }),
    recoverRuns: ({ now }) =>
      db.tx(async (q) => {
        const stale = (await q`
          SELECT * FROM runs WHERE status = 'running'
            AND (lease_expires_at < ${now} OR holder_host = ${db.host})
          FOR UPDATE SKIP LOCKED`).map(toQueuedRun).filter((run) => isStaleRun(run, { now, host: db.host }));
        const handled: QueuedRun[] = [];
        for (const run of stale) {
          const next = recovery(run);
          // Nobody waits for its approvals any more: they leave the pending list.
          await q`
            UPDATE approvals SET status = 'cancelled', decision_reason = 'the run''s worker died before a decision',
              decided_at = ${now}
            WHERE run_id = ${run.id} AND status = 'pending'`;
          if (run.session_id) {
            await q`
              UPDATE sessions SET status = 'interrupted', terminal_reason = 'holder_died', ended_at = ${now},
                updated_at = ${now}, owner_pid = NULL WHERE id = ${run.session_id} AND status = 'running'`;
          }
          const [row] = next.status === "queued"
            ? await q`
              UPDATE runs SET status = 'queued', holder_host = NULL, holder_pid = NULL, holder_started = NULL,
                holder_nonce = NULL, lease_expires_at = NULL, note = ${next.note}
              WHERE id = ${run.id} RETURNING *`
            : await q`
              UPDATE runs SET status = 'crashed', finished_at = ${now}, lease_expires_at = NULL, note = ${next.note}
              WHERE id = ${run.id} RETURNING *`;
          await notify(q, run.id);
          handled.push(toQueuedRun(row!));
        }
        return handled;
      }),
    takeUnnotifiedRuns: async () =>
      (await sql`
        UPDATE runs SET notify_pending = false WHERE id IN (
          SELECT id FROM runs WHERE notify_pending ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED)
        RETURNING *`).map(toQueuedRun),
    groupRunning: async (group) =>
      Number(
        (await sql`SELECT count(*)::int AS n FROM runs WHERE status = 'running' AND group_key = ${group}`)[0]!
          .n,
      ),
    holdModel: async (model, until) => {
      await sql`
        INSERT INTO model_holds (model, until) VALUES (${model}, ${until})
        ON CONFLICT (model) DO UPDATE SET until = greatest(model_holds.until, excluded.until)`;
    },
    modelHolds: async (now) =>
      Object.fromEntries(
        (await sql`SELECT model, until FROM model_holds WHERE until > ${now}`)
          .map((r) => [String(r.model), Number(r.until)]),
      ),
    recordDelivery: async (d) => {
      await sql`
        INSERT INTO run_deliveries (id, run_id, target, event, status, attempts, response_status, error,
          created_at, updated_at)
        VALUES (${d.id}, ${d.run_id}, ${d.target}, ${d.event}, ${d.status}, ${d.attempts}, ${d.response_status},
          ${d.error}, ${d.created_at}, ${d.updated_at})
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, attempts = excluded.attempts,
          response_status = excluded.response_status, error = excluded.error, updated_at = excluded.updated_at`;
    },
    runDeliveries: async (runId) =>
      (await sql`SELECT * FROM run_deliveries WHERE run_id = ${runId} ORDER BY created_at, id`).map(
        toDelivery,
      ),
    appendRunEvents: (runId, events) =>
      events.length === 0 ? Promise.resolve() : appendEvents(db, runId, events),
    runEvents: async (runId, afterSeq) =>
      (await sql`SELECT run_id, seq, event FROM run_events WHERE run_id = ${runId} AND seq > ${afterSeq} ORDER BY seq`)
        .map((r) => ({ run_id: String(r.run_id), seq: Number(r.seq), event: JSON.parse(String(r.event)) })),
    watchRuns: async (wake) => {
      const { unlisten } = await sql.listen(RUNS_CHANNEL, (payload) => wake(payload));
      return async () => {
        await unlisten();
      };
    },
    watchRunEvents: async (wake) => {
      const { unlisten } = await sql.listen(RUN_EVENTS_CHANNEL, (payload) => wake(payload));
      return async () => {
        await unlisten();
      };
    },
  };
}

/** A keyed submit that found its key taken after cancelling: rolls the cancels back. */
class Deduplicated extends Error {
  constructor(readonly run: QueuedRun) {
    super("deduplicated");
  }
}

/** Claimed runs in the order a claim takes them. */
function claimOrder(a: QueuedRun, b: QueuedRun): number {
  return b.priority - a.priority || a.submitted_at - b.submitted_at ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

const UNIQUE_VIOLATION = "23505";

/**
 * Runs `write` (a transaction appending a run's events) again when its event numbers were taken meanwhile:
 * a run's events come from one worker, in order, but should two appends of one run still meet (a retry
 * overlapping), the second finds its numbers taken and numbers again.
 */
async function numberingAgain<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= 5 || (error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    }
  }
}

/**
 * Appends a run's events after those stored, numbered on from the highest, and notifies their readers (a
 * server's streams), in one statement.
 */
function insertEvents(q: Q, runId: string, events: readonly unknown[]) {
  return q`
    WITH ins AS (
      INSERT INTO run_events (run_id, seq, event)
      SELECT ${runId}, coalesce((SELECT max(seq) FROM run_events WHERE run_id = ${runId}), 0) + ord, event
      FROM jsonb_array_elements_text(${q.json(events.map((e) => JSON.stringify(e)))})
        WITH ORDINALITY AS t(event, ord)
      RETURNING seq)
    SELECT pg_notify(${RUN_EVENTS_CHANNEL}, ${runId}) FROM (SELECT 1 FROM ins LIMIT 1) AS stored`;
}

async function appendEvents(db: PgDb, runId: string, events: readonly unknown[]): Promise<void> {
  await numberingAgain(() =>
    db.tx(async (q) => {
      await insertEvents(q, runId, events);
    })
  );
}
