/**
 * Deleting, archiving, unarchiving and pruning sessions. Each change is one `BEGIN IMMEDIATE` transaction
 * that resolves, re-checks liveness and changes; a big prune is a series of them (see pruneSessions).
 */
import type { SQLInputValue } from "node:sqlite";
import type { AdminOps, ArchiveResult, BusySession, PruneRequest, PruneResult } from "../store.ts";
import { SessionBusyError } from "../errors.ts";
import { messageBatches } from "../rules.ts";
import { jsonList, settle, type SqliteDb } from "./_db.ts";
import { getSessionSummary, listSessionsJson } from "./listing.ts";
import { findBusySessions, orphanedSessions } from "./liveness.ts";
import { resolveSessionIds } from "./sessions.ts";

export function adminOps(db: SqliteDb): AdminOps {
  return {
    listSessions: (options) => settle(() => listSessionsJson(db, options).map((json) => JSON.parse(json))),
    listSessionsJson: (options) => settle(() => listSessionsJson(db, options)),
    getSessionSummary: (id) => settle(() => getSessionSummary(db, id)),
    deleteSessions: (refs, options = {}) =>
      settle(() =>
        db.immediate(() => {
          const ids = resolveSessionIds(db, refs, { action: "delete sessions", mutating: true });
          refuseBusy(db, ids, "delete sessions", options.force);
          deleteRows(db, ids);
          return ids;
        })
      ),
    archiveSessions: (refs, options = {}) =>
      settle(() =>
        db.immediate(() => {
          const ids = resolveSessionIds(db, refs, { action: "archive sessions", mutating: true });
          const split = splitByArchived(db, ids, false);
          refuseBusy(db, split.changed, "archive sessions", options.force);
          setArchivedAt(db, split.changed, db.clock.now());
          return split;
        })
      ),
    unarchiveSessions: (refs) =>
      settle(() =>
        db.immediate(() => {
          const ids = resolveSessionIds(db, refs, { action: "unarchive sessions", mutating: true });
          const split = splitByArchived(db, ids, true);
          setArchivedAt(db, split.changed, null);
          return split;
        })
      ),
    pruneSessions: (request) => pruneSessions(db, request),
    findBusySessions: (ids) => settle(() => findBusySessions(db, ids)),
    orphanedSessions: (keys) => settle(() => orphanedSessions(db, keys)),
  };
}

/**
 * Deleting a message costs an index update, so a big prune runs as a series of short write transactions
 * (each re-checks its sessions and deletes whole ones) with pauses as long as each took, so that running
 * agents can append in between.
 */
async function pruneSessions(db: SqliteDb, request: PruneRequest): Promise<PruneResult> {
  const plan = db.immediate(() => planPrune(db, request));
  if (request.dryRun || plan.ids.length === 0) return plan;
  const deleted: string[] = [];
  const skipped = [...plan.skipped];
  for (const batch of batches(db, plan.ids, request.batchMessages ?? 2000)) {
    const started = performance.now();
    db.immediate(() => {
      // Another process may have deleted, resumed or taken one of them since the plan.
      const due = candidates(db, plan.cutoff, request.job, batch);
      const busy = findBusySessions(db, due);
      const ids = due.filter((id) => !busy.some((b) => b.id === id));
      deleteRows(db, ids);
      deleted.push(...ids);
      skipped.push(...busy);
    });
    if (batch.at(-1) !== plan.ids.at(-1)) await db.clock.sleep(Math.max(5, performance.now() - started));
  }
  return { cutoff: plan.cutoff, ids: deleted, skipped };
}

function planPrune(db: SqliteDb, request: PruneRequest): PruneResult {
  const cutoff = db.clock.now() - request.olderThanMs;
  const ids = candidates(db, cutoff, request.job);
  const skipped = findBusySessions(db, ids);
  const busy = new Set(skipped.map((s) => s.id));
  return { cutoff, ids: ids.filter((id) => !busy.has(id)), skipped };
}

/** Sessions updated before `cutoff` (of `job`; among `among`), oldest first. */
function candidates(
  db: SqliteDb,
  cutoff: number,
  job: string | undefined,
  among?: readonly string[],
): string[] {
  const where = ["updated_at < ?"];
  const params: SQLInputValue[] = [cutoff];
  if (job !== undefined) (where.push("job = ?"), params.push(job));
  if (among) (where.push("id IN (SELECT value FROM json_each(?))"), params.push(jsonList(among)));
  return db.stmt(`SELECT id FROM sessions WHERE ${where.join(" AND ")} ORDER BY created_at, id`)
    .all(...params).map((row) => String(row.id));
}

/** `messageBatches` of `ids`, with their message counts read. */
function batches(db: SqliteDb, ids: readonly string[], messages: number): string[][] {
  const counts = db.stmt(
    `SELECT session_id, count(*) AS n FROM messages WHERE session_id IN (SELECT value FROM json_each(?))
     GROUP BY session_id`,
  ).all(jsonList(ids)).map((row) => [String(row.session_id), Number(row.n)] as const);
  return messageBatches(ids, new Map(counts), messages);
}

/** Deletes session rows (cascading to their messages, state, leases and log); the caller holds the transaction. */
function deleteRows(db: SqliteDb, ids: readonly string[]): void {
  const list = jsonList(ids);
  db.stmt("UPDATE schedule_runs SET session_id = NULL WHERE session_id IN (SELECT value FROM json_each(?))")
    .run(list);
  db.stmt("DELETE FROM sessions WHERE id IN (SELECT value FROM json_each(?))").run(list);
}

function refuseBusy(db: SqliteDb, ids: readonly string[], action: string, force: boolean | undefined): void {
  if (force || ids.length === 0) return;
  const busy: BusySession[] = findBusySessions(db, ids);
  if (busy.length > 0) throw new SessionBusyError(action, busy);
}

/** Splits `ids` into those whose archived state is `archived` (to change) and the rest. */
function splitByArchived(db: SqliteDb, ids: readonly string[], archived: boolean): ArchiveResult {
  const archivedIds = new Set(
    db.stmt(
      "SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?)) AND archived_at IS NOT NULL",
    )
      .all(jsonList(ids)).map((row) => String(row.id)),
  );
  const changed = ids.filter((id) => archivedIds.has(id) === archived);
  return { changed, unchanged: ids.filter((id) => !changed.includes(id)) };
}

function setArchivedAt(db: SqliteDb, ids: readonly string[], at: number | null): void {
  if (ids.length === 0) return;
  db.stmt("UPDATE sessions SET archived_at = ? WHERE id IN (SELECT value FROM json_each(?))").run(
    at,
    jsonList(ids),
  );
}
