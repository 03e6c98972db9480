/** `hermes sessions prune`: deleting sessions idle for longer than a duration, with a dry run that matches. */
import type { SQLInputValue } from "node:sqlite";
import { type Hooks, noHooks } from "../core/hooks.ts";
import type { Store } from "../store/store.ts";
import { type BusySession, findBusySessions } from "./liveness.ts";
import { deleteRows } from "./remove.ts";

export interface PruneOptions {
  /** Sessions whose last update (`updated_at`) is older than this many milliseconds are pruned. */
  olderThanMs: number;
  job?: string;
  /** Compute and return the plan; change nothing, call no hook. */
  dryRun?: boolean;
  hooks?: Hooks;
  /** Messages deleted per write transaction (whole sessions; at least one per transaction). Default 2 000. */
  batchMessages?: number;
}

export interface PrunePlan {
  /** Epoch ms: sessions updated before this are candidates. */
  cutoff: number;
  /** The sessions pruned (or, in a dry run, that would be), oldest first. */
  ids: string[];
  /** Candidates left alone because a live process holds them. */
  skipped: BusySession[];
}

/**
 * Archived sessions are pruned like any other; sessions held by a live process are skipped, never forced.
 * Deleting a message costs an index update, so a big prune runs as a series of short write transactions
 * (each re-checks its sessions and deletes whole ones) with pauses as long as each took, so that running
 * agents can append in between. `on_session_delete` fires once, after the last commit, with every id.
 * A dry run reports exactly the ids a real run deletes, unless the store changes in between.
 */
export async function pruneSessions(store: Store, options: PruneOptions): Promise<PrunePlan> {
  const plan = store.immediate(() => planPrune(store, options));
  if (options.dryRun || plan.ids.length === 0) return plan;
  const deleted: string[] = [];
  const skipped = [...plan.skipped];
  for (const batch of batches(store, plan.ids, options.batchMessages ?? 2000)) {
    const started = performance.now();
    store.immediate(() => {
      // Another process may have deleted, resumed or taken one of them since the plan.
      const due = candidates(store, plan.cutoff, options.job, batch);
      const busy = findBusySessions(store, due);
      const ids = due.filter((id) => !busy.some((b) => b.id === id));
      deleteRows(store, ids);
      deleted.push(...ids);
      skipped.push(...busy);
    });
    if (batch.at(-1) !== plan.ids.at(-1)) await store.clock.sleep(Math.max(5, performance.now() - started));
  }
  if (deleted.length > 0) {
    await (options.hooks ?? noHooks).onSessionDelete({
      session_id: deleted[0]!,
      reason: "prune",
      deleted_ids: deleted,
    });
  }
  return { cutoff: plan.cutoff, ids: deleted, skipped };
}

function planPrune(store: Store, options: PruneOptions): PrunePlan {
  const cutoff = store.clock.now() - options.olderThanMs;
  const ids = candidates(store, cutoff, options.job);
  const skipped = findBusySessions(store, ids);
  const busy = new Set(skipped.map((s) => s.id));
  return { cutoff, ids: ids.filter((id) => !busy.has(id)), skipped };
}

/** Sessions updated before `cutoff` (of `job`; among `among`), oldest first. */
function candidates(
  store: Store,
  cutoff: number,
  job: string | undefined,
  among?: readonly string[],
): string[] {
  const where = ["updated_at < ?"];
  const params: SQLInputValue[] = [cutoff];
  if (job !== undefined) (where.push("job = ?"), params.push(job));
  if (among) (where.push("id IN (SELECT value FROM json_each(?))"), params.push(JSON.stringify(among)));
  return store.stmt(`SELECT id FROM sessions WHERE ${where.join(" AND ")} ORDER BY created_at, id`)
    .all(...params).map((row) => String(row.id));
}

/** Consecutive groups of `ids` holding about `messages` messages each (a bigger session is a group alone). */
function batches(store: Store, ids: readonly string[], messages: number): string[][] {
  const counts = new Map(
    store.stmt(
      "SELECT session_id, count(*) AS n FROM messages WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id",
    ).all(JSON.stringify(ids)).map((row) => [String(row.session_id), Number(row.n)]),
  );
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
