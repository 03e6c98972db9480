/**
 * The `runs` table as a queue: submitted runs, claimed by workers inside one BEGIN IMMEDIATE transaction
 * (SQLite's single writer makes a claim, its group limits and `queue.max_running` one atomic decision),
 * leased to their worker like schedule claims, and finished, renewed or cancelled by statements qualified
 * with the worker's nonce. A store file has no notifications: workers poll (`watchRuns` never wakes).
 */
import { NotFoundError } from "../../core/errors.ts";
import type { QueuedRun, RunQueueOps } from "../store.ts";
import { newRunId } from "../ids.ts";
import { isStaleRun, pickClaims, recovery, resolvedRunId, toDelivery, toQueuedRun } from "../_run_queue.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";
import { HOLDER } from "./_holder.ts";

/** Whether a running run holds a pending approval: read by the public reads (it shows waiting_approval). */
const WAITING = "EXISTS (SELECT 1 FROM approvals a WHERE a.run_id = runs.id AND a.status = 'pending')";

/** Which runs a claim may take, by their pin (the parameter is the claiming worker's nonce). */
const PINNED = {
  any: "(pinned_to IS NULL OR pinned_to = ?)",
  only: "pinned_to = ?",
  none: "pinned_to IS NULL",
} as const;

export function runQueueOps(db: SqliteDb): RunQueueOps {
  const get = (id: string): QueuedRun | undefined => {
    const row = db.stmt(`SELECT runs.*, ${WAITING} AS waiting_approval FROM runs WHERE id = ?`).get(id) as
      | Row
      | undefined;
    return row && toQueuedRun(row);
  };
  const running = (group: string) =>
    Number(
      (db.stmt("SELECT count(*) AS n FROM runs WHERE status = 'running' AND group_key = ?").get(group) as Row)
        .n,
    );
  return {
    submitRun: (run) =>
      settle(() =>
        db.immediate(() => {
          if (run.key) {
            const row = db.stmt("SELECT * FROM runs WHERE key = ?").get(run.key) as Row | undefined;
            if (row) return { run: toQueuedRun(row), deduplicated: true };
          }
          const id = run.id ?? newRunId(run.now);
          if (run.cancel_in_progress && run.group) {
            db.stmt(
              `UPDATE runs SET status = 'cancelled', finished_at = ?, note = ?, notify_pending = 1
               WHERE group_key = ? AND status = 'queued'`,
            ).run(
              run.now,
              `cancelled: run ${id} of the same group was submitted (cancel_in_progress)`,
              run.group,
            );
            db.stmt("UPDATE runs SET cancel_requested = 1 WHERE group_key = ? AND status = 'running'").run(
              run.group,
            );
          }
          db.stmt(
            `INSERT INTO runs (id, job, job_path, job_snapshot, inputs, key, priority, not_before, status,
               on_crash, group_key, group_limit, model, labels, triggered_by, pinned_to, submitted_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(
            id,
            run.job,
            run.job_path,
            run.job_snapshot,
            JSON.stringify(run.inputs),
            run.key ?? null,
            run.priority ?? 0,
            run.not_before ?? null,
            run.on_crash ?? "skip",
            run.group ?? null,
            run.group_limit ?? null,
            run.model ?? null,
            JSON.stringify(run.labels ?? {}),
            run.trigger ?? "cli",
            run.pinned_to ?? null,
            run.now,
          );
          return { run: get(id)!, deduplicated: false };
        })
      ),
    getRun: (id) => settle(() => get(id)),
    resolveRunId: (ref) =>
      settle(() => {
        if (get(ref)) return ref;
        const prefixed = (db.stmt("SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT 3")
          .all(ref, ref + "\uffff") as Row[]).map((r) => String(r.id));
        return resolvedRunId(ref, false, prefixed);
      }),
    listRuns: (options = {}) =>
      settle(() => {
        const where: string[] = [];
        const params: (string | number)[] = [];
        if (options.status === "waiting_approval") where.push(`status = 'running' AND ${WAITING}`);
        else if (options.status === "running") where.push(`status = 'running' AND NOT ${WAITING}`);
        else if (options.status) (where.push("status = ?"), params.push(options.status));
        if (options.job) (where.push("job = ?"), params.push(options.job));
        if (options.since !== undefined) (where.push("submitted_at >= ?"), params.push(options.since));
        if (options.until !== undefined) (where.push("submitted_at < ?"), params.push(options.until));
        if (options.before) {
          where.push("(submitted_at < ? OR (submitted_at = ? AND id < ?))");
          params.push(options.before.submitted_at, options.before.submitted_at, options.before.id);
        }
        for (const [key, value] of Object.entries(options.labels ?? {})) {
          where.push("EXISTS (SELECT 1 FROM json_each(runs.labels) WHERE key = ? AND value = ?)");
          params.push(key, value);
        }
        if (options.key) (where.push("key = ?"), params.push(options.key));
        const sql = `SELECT runs.*, ${WAITING} AS waiting_approval FROM runs
          ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
          ORDER BY submitted_at DESC, id DESC LIMIT ?`;
        return (db.stmt(sql).all(...params, options.limit ?? -1) as Row[]).map(toQueuedRun);
      }),
    claimRuns: ({ holder, now, lease_ms, max, max_running, pinned }) =>
      settle(() => {
        // Idle workers poll: a read first, so an empty queue costs them no write lock.
        if (max <= 0 || !db.stmt("SELECT 1 FROM runs WHERE status = 'queued' LIMIT 1").get()) return [];
        return db.immediate(() => {
          let room = Infinity;
          if (max_running !== undefined && max_running !== null) {
            const total = Number(
              (db.stmt("SELECT count(*) AS n FROM runs WHERE status = 'running'").get() as Row).n,
            );
            room = Math.max(0, max_running - total);
            if (room === 0) return [];
          }
          const candidates = (db.stmt(
            `SELECT * FROM runs WHERE status = 'queued' AND (not_before IS NULL OR not_before <= ?)
               AND (model IS NULL OR model NOT IN (SELECT model FROM model_holds WHERE until > ?))
               AND ${PINNED[pinned ?? "any"]}
               AND (group_key IS NULL OR group_limit IS NULL OR group_limit > (SELECT count(*) FROM runs r
                 WHERE r.status = 'running' AND r.group_key = runs.group_key))
             ORDER BY priority DESC, submitted_at, id LIMIT ?`,
          ).all(
            now,
            now,
            ...(pinned === "none" ? [] : [holder.nonce]),
            Math.min(max, room) * 4 + 16,
          ) as Row[])
            .map(toQueuedRun);
          const picked = pickClaims(candidates, { max, room, running });
          const claim = db.stmt(
            `UPDATE runs SET status = 'running', ${HOLDER.assign}, lease_expires_at = ?, attempts = attempts + 1,
               started_at = ?, session_id = NULL WHERE id = ? AND status = 'queued'`,
          );
          for (const run of picked) claim.run(...HOLDER.values(holder), now + lease_ms, now, run.id);
          return picked.map((run) => get(run.id)!);
        });
      }),
    pinRun: (id, nonce) =>
      settle(() =>
        Number(
          db.stmt("UPDATE runs SET pinned_to = ? WHERE id = ? AND status = 'queued'").run(nonce, id).changes,
        ) === 1
      ),
    setRunSession: (id, holder, sessionId) =>
      settle(() =>
        Number(
          db.stmt("UPDATE runs SET session_id = ? WHERE id = ? AND holder_nonce = ? AND status = 'running'")
            .run(sessionId, id, holder.nonce).changes,
        ) === 1
      ),
    renewRuns: (holder, { now, lease_ms }) =>
      settle(() =>
        db.immediate(() => {
          db.stmt("UPDATE runs SET lease_expires_at = ? WHERE holder_nonce = ? AND status = 'running'")
            .run(now + lease_ms, holder.nonce);
          const rows = db.stmt(
            "SELECT id, cancel_requested FROM runs WHERE holder_nonce = ? AND status = 'running'",
          ).all(holder.nonce) as Row[];
          return {
            held: rows.map((r) => String(r.id)),
            cancel: rows.filter((r) => Number(r.cancel_requested) === 1).map((r) => String(r.id)),
          };
        })
      ),
    cancelRequests: (holder) =>
      settle(() =>
        (db.stmt(
          "SELECT id FROM runs WHERE holder_nonce = ? AND status = 'running' AND cancel_requested = 1",
        ).all(holder.nonce) as Row[]).map((r) => String(r.id))
      ),
    finishRun: (end) =>
      settle(() =>
        db.immediate(() => {
          if (end.events?.length) insertRunEvents(db, end.id, end.events);
          return Number(
            db.stmt(
              `UPDATE runs SET status = ?, session_id = coalesce(?, session_id), result = ?, exit_code = ?,
               finished_at = ?, lease_expires_at = NULL, note = coalesce(?, note)
             WHERE id = ? AND holder_nonce = ? AND status = 'running'`,
            ).run(
              end.status,
              end.session_id,
              end.result === undefined || end.result === null ? null : JSON.stringify(end.result),
              end.exit_code,
              end.now,
              end.note ?? null,
              end.id,
              end.holder.nonce,
            ).changes,
          ) === 1;
        })
      ),
    cancelRun: (id, now) =>
      settle(() =>
        db.immediate(() => {
          db.stmt(
            `UPDATE runs SET status = 'cancelled', finished_at = ?, note = 'cancelled before it started',
               notify_pending = 1 WHERE id = ? AND status = 'queued'`,
          ).run(now, id);
          db.stmt("UPDATE runs SET cancel_requested = 1 WHERE id = ? AND status = 'running'").run(id);
          const run = get(id);
          if (!run) throw new NotFoundError(`Cannot cancel run "${id}": no such run id`);
          return run;
        })
      ),
    recoverRuns: ({ now }) =>
      settle(() => {
        const staleRuns = () =>
          (db.stmt("SELECT * FROM runs WHERE status = 'running'").all() as Row[])
            .map(toQueuedRun)
            .filter((run) => isStaleRun(run, { now, host: db.host }));
        // Every worker looks often: a read first, so a healthy queue costs them no write lock.
        if (staleRuns().length === 0) return [];
        return db.immediate(() => {
          const stale = staleRuns();
          return stale.map((run) => {
            const next = recovery(run);
            // Nobody waits for its approvals any more: they leave the pending list.
            db.stmt(
              `UPDATE approvals SET status = 'cancelled', decision_reason = ?, decided_at = ?
               WHERE run_id = ? AND status = 'pending'`,
            ).run("the run's worker died before a decision", now, run.id);
            if (run.session_id) {
              db.stmt(
                `UPDATE sessions SET status = 'interrupted', terminal_reason = 'holder_died', ended_at = ?,
                   updated_at = ?, owner_pid = NULL WHERE id = ? AND status = 'running'`,
              ).run(now, now, run.session_id);
            }
            if (next.status === "queued") {
              db.stmt(
                `UPDATE runs SET status = 'queued', holder_host = NULL, holder_pid = NULL, holder_started = NULL,
                   holder_nonce = NULL, lease_expires_at = NULL, note = ? WHERE id = ? AND holder_nonce = ?`,
              ).run(next.note, run.id, run.holder!.nonce);
            } else {
              db.stmt(
                `UPDATE runs SET status = 'crashed', finished_at = ?, lease_expires_at = NULL, note = ?
                 WHERE id = ? AND holder_nonce = ?`,
              ).run(now, next.note, run.id, run.holder!.nonce);
            }
            return get(run.id)!;
          });
        });
      }),
    takeUnnotifiedRuns: () =>
      settle(() => {
        const pending = () => db.stmt("SELECT * FROM runs WHERE notify_pending = 1 ORDER BY id LIMIT 100");
        // Every worker looks often: a read first, so nothing owed costs them no write lock.
        if (!pending().get()) return [];
        return db.immediate(() => {
          const runs = (pending().all() as Row[]).map(toQueuedRun);
          const done = db.stmt("UPDATE runs SET notify_pending = 0 WHERE id = ?");
          for (const run of runs) done.run(run.id);
          return runs;
        });
      }),
    groupRunning: (group) => settle(() => running(group)),
    holdModel: (model, until) =>
      settle(() => {
        db.stmt(
          `INSERT INTO model_holds (model, until) VALUES (?, ?)
           ON CONFLICT (model) DO UPDATE SET until = max(until, excluded.until)`,
        ).run(model, until);
      }),
    modelHolds: (now) =>
      settle(() =>
        Object.fromEntries(
          (db.stmt("SELECT model, until FROM model_holds WHERE until > ?").all(now) as Row[])
            .map((r) => [String(r.model), Number(r.until)]),
        )
      ),
    recordDelivery: (d) =>
      settle(() => {
        db.stmt(
          `INSERT INTO run_deliveries (id, run_id, target, event, status, attempts, response_status, error,
             created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET status = excluded.status, attempts = excluded.attempts,
             response_status = excluded.response_status, error = excluded.error, updated_at = excluded.updated_at`,
        ).run(
          d.id,
          d.run_id,
          d.target,
          d.event,
          d.status,
          d.attempts,
          d.response_status,
          d.error,
          d.created_at,
          d.updated_at,
        );
      }),
    runDeliveries: (runId) =>
      settle(() =>
        (db.stmt("SELECT * FROM run_deliveries WHERE run_id = ? ORDER BY created_at, id").all(runId) as Row[])
          .map(toDelivery)
      ),
    appendRunEvents: (runId, events) =>
      settle(() =>
        db.immediate(() => {
          if (events.length > 0) insertRunEvents(db, runId, events);
        })
      ),
    runEvents: (runId, afterSeq) =>
      settle(() =>
        (db.stmt("SELECT run_id, seq, event FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq")
          .all(runId, afterSeq) as Row[]).map((r) => ({
            run_id: String(r.run_id),
            seq: Number(r.seq),
            event: JSON.parse(String(r.event)),
          }))
      ),
    watchRuns: () => Promise.resolve(() => Promise.resolve()),
    watchRunEvents: () => Promise.resolve(() => Promise.resolve()),
  };
}

/** Appends a run's events after those stored (inside the caller's transaction). */
function insertRunEvents(db: SqliteDb, runId: string, events: readonly unknown[]): void {
  const last = Number(
    (db.stmt("SELECT coalesce(max(seq), 0) AS n FROM run_events WHERE run_id = ?").get(runId) as Row).n,
  );
  const insert = db.stmt("INSERT INTO run_events (run_id, seq, event) VALUES (?, ?, ?)");
  events.forEach((event, i) => insert.run(runId, last + i + 1, JSON.stringify(event)));
}
