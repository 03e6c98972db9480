/**
 * Deleting, archiving, unarchiving and pruning sessions. Each change is one transaction that resolves,
 * locks the session rows (owners, appends and lease takers wait), re-checks liveness and changes; a big
 * prune is a series of them (see pruneSessions). Deletes return the ids this transaction deleted, so when
 * several processes delete at once each session is reported (and its hook fired) by one of them only.
 */
import type { AdminOps, ArchiveResult, PruneRequest, PruneResult } from "../store.ts";
import { SessionBusyError } from "../errors.ts";
import { messageBatches } from "../rules.ts";
import { json, type PgDb, type Q } from "./_db.ts";
import { getSessionSummary, listSessions } from "./listing.ts";
import { findBusySessions, orphanedSessions } from "./liveness.ts";
import { resolveSessionIds } from "./sessions.ts";

export function adminOps(db: PgDb): AdminOps {
  const { sql } = db;
  return {
    listSessions: (options) => listSessions(sql, options),
    listSessionsJson: async (options) => (await listSessions(sql, options)).map((s) => JSON.stringify(s)),
    getSessionSummary: (id) => getSessionSummary(sql, id),
    deleteSessions: (refs, options = {}) =>
      db.tx(async (q) => {
        const ids = await lockSessions(
          q,
          await resolveSessionIds(q, refs, { action: "delete sessions", mutating: true }),
        );
        await refuseBusy(db, q, ids, { action: "delete sessions", force: options.force });
        return await deleteRows(q, ids);
      }),
    archiveSessions: (refs, options = {}) =>
      db.tx(async (q) => {
        const ids = await lockSessions(
          q,
          await resolveSessionIds(q, refs, { action: "archive sessions", mutating: true }),
        );
        const split = await splitByArchived(q, ids, false);
        await refuseBusy(db, q, split.changed, { action: "archive sessions", force: options.force });
        await setArchivedAt(q, split.changed, db.clock.now());
        return split;
      }),
    unarchiveSessions: (refs) =>
      db.tx(async (q) => {
        const ids = await lockSessions(
          q,
          await resolveSessionIds(q, refs, { action: "unarchive sessions", mutating: true }),
        );
        const split = await splitByArchived(q, ids, true);
        await setArchivedAt(q, split.changed, null);
        return split;
      }),
    pruneSessions: (request) => pruneSessions(db, request),
    findBusySessions: (ids) => findBusySessions(db, sql, ids),
    orphanedSessions: (keys) => orphanedSessions(db, keys),
  };
}

/** Locks the rows of `ids` until the transaction ends; returns those that still exist, in the order given. */
async function lockSessions(q: Q, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await q`
    SELECT id FROM sessions WHERE id IN (SELECT value FROM jsonb_array_elements_text(${json(q, ids)}))
    ORDER BY id FOR UPDATE`;
  const found = new Set(rows.map((row) => String(row.id)));
  return ids.filter((id) => found.has(id));
}

/**
 * Deleting a message costs index updates, so a big prune runs as a series of short transactions (each
 * re-checks its sessions and deletes whole ones) with pauses as long as each took, so that running agents
 * can append in between.
 */
async function pruneSessions(db: PgDb, request: PruneRequest): Promise<PruneResult> {
  const plan = await planPrune(db, request);
  if (request.dryRun || plan.ids.length === 0) return plan;
  const deleted: string[] = [];
  const skipped = [...plan.skipped];
  for (const batch of await batches(db.sql, plan.ids, request.batchMessages ?? 2000)) {
    const started = performance.now();
    await db.tx(async (q) => {
      // Another process may have deleted, resumed or taken one of them since the plan.
      const due = await lockSessions(q, await candidates(q, plan.cutoff, request.job, batch));
      const busy = await findBusySessions(db, q, due);
      deleted.push(...await deleteRows(q, due.filter((id) => !busy.some((b) => b.id === id))));
      skipped.push(...busy);
    });
    if (batch.at(-1) !== plan.ids.at(-1)) await db.clock.sleep(Math.max(5, performance.now() - started));
  }
  return { cutoff: plan.cutoff, ids: deleted, skipped };
}

async function planPrune(db: PgDb, request: PruneRequest): Promise<PruneResult> {
  const cutoff = db.clock.now() - request.olderThanMs;
  const ids = await candidates(db.sql, cutoff, request.job);
  const skipped = await findBusySessions(db, db.sql, ids);
  const busy = new Set(skipped.map((s) => s.id));
  return { cutoff, ids: ids.filter((id) => !busy.has(id)), skipped };
}

/** Sessions updated before `cutoff` (of `job`; among `among`), oldest first. */
async function candidates(q: Q, cutoff: number, job: string | undefined, among?: readonly string[]) {
  const rows = await q`
    SELECT id FROM sessions WHERE updated_at < ${cutoff}
      ${job === undefined ? q`` : q`AND job = ${job}`}
      ${among ? q`AND id IN (SELECT value FROM jsonb_array_elements_text(${json(q, among)}))` : q``}
    ORDER BY created_at, id`;
  return rows.map((row) => String(row.id));
}

/** `messageBatches` of `ids`, with their message counts read. */
async function batches(q: Q, ids: readonly string[], messages: number): Promise<string[][]> {
  const rows = await q`
    SELECT session_id, count(*) AS n FROM messages
    WHERE session_id IN (SELECT value FROM jsonb_array_elements_text(${json(q, ids)})) GROUP BY session_id`;
  return messageBatches(ids, new Map(rows.map((row) => [String(row.session_id), Number(row.n)])), messages);
}

/**
 * Deletes session rows (cascading to their messages, state, leases and log; schedule runs keep their slot
 * and lose the session) inside the caller's transaction. Returns the ids deleted, in the order of `ids`.
 */
async function deleteRows(q: Q, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const list = json(q, ids);
  await q`
    UPDATE schedule_runs SET session_id = NULL
    WHERE session_id IN (SELECT value FROM jsonb_array_elements_text(${list}))`;
  const rows = await q`
    DELETE FROM sessions WHERE id IN (SELECT value FROM jsonb_array_elements_text(${list})) RETURNING id`;
  const deleted = new Set(rows.map((row) => String(row.id)));
  return ids.filter((id) => deleted.has(id));
}

async function refuseBusy(
  db: PgDb,
  q: Q,
  ids: readonly string[],
  options: { action: string; force: boolean | undefined },
): Promise<void> {
  if (options.force || ids.length === 0) return;
  const busy = await findBusySessions(db, q, ids);
  if (busy.length > 0) throw new SessionBusyError(options.action, busy);
}

/** Splits `ids` into those whose archived state is `archived` (to change) and the rest. */
async function splitByArchived(q: Q, ids: readonly string[], archived: boolean): Promise<ArchiveResult> {
  if (ids.length === 0) return { changed: [], unchanged: [] };
  const rows = await q`
    SELECT id FROM sessions
    WHERE id IN (SELECT value FROM jsonb_array_elements_text(${json(q, ids)})) AND archived_at IS NOT NULL`;
  const archivedIds = new Set(rows.map((row) => String(row.id)));
  const changed = ids.filter((id) => archivedIds.has(id) === archived);
  return { changed, unchanged: ids.filter((id) => !changed.includes(id)) };
}

async function setArchivedAt(q: Q, ids: readonly string[], at: number | null): Promise<void> {
  if (ids.length === 0) return;
  await q`
    UPDATE sessions SET archived_at = ${at}::bigint
    WHERE id IN (SELECT value FROM jsonb_array_elements_text(${json(q, ids)}))`;
}
