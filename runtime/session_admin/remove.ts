/**
 * Deleting, archiving and unarchiving sessions. Each call is one `BEGIN IMMEDIATE` transaction (resolve,
 * re-check, change) and calls `on_session_delete` exactly once after the commit, only if something changed.
 */
import { type Hooks, noHooks } from "../core/hooks.ts";
import type { Store } from "../store/store.ts";
import { findBusySessions, SessionBusyError } from "./liveness.ts";
import { resolveSessionIds } from "./resolve.ts";

export interface RemoveOptions {
  hooks?: Hooks;
  /** Act even on sessions a live process holds (see findBusySessions). */
  force?: boolean;
}

/**
 * Deletes the sessions with their messages, state, compaction leases and log (foreign-key cascades); schedule
 * runs keep their slot but lose the session reference. All or none: an unknown id or a busy session (unless
 * `force`) throws and nothing is deleted. Returns the deleted ids.
 */
export async function deleteSessions(
  store: Store,
  refs: readonly string[],
  options: RemoveOptions = {},
): Promise<string[]> {
  const ids = store.immediate(() => {
    const ids = resolveSessionIds(store, refs, { action: "delete sessions", mutating: true });
    refuseBusy(store, ids, "delete sessions", options.force);
    deleteRows(store, ids);
    return ids;
  });
  if (ids.length > 0) {
    await (options.hooks ?? noHooks).onSessionDelete({
      session_id: ids[0]!,
      reason: "delete",
      deleted_ids: ids,
    });
  }
  return ids;
}

export interface ArchiveResult {
  /** Sessions whose archived state changed. */
  changed: string[];
  /** Sessions that were already in the requested state. */
  unchanged: string[];
}

/** Hides sessions from `list` and keeps everything. Already archived sessions are left alone (no hook for them). */
export async function archiveSessions(
  store: Store,
  refs: readonly string[],
  options: RemoveOptions = {},
): Promise<ArchiveResult> {
  const result = store.immediate(() => {
    const ids = resolveSessionIds(store, refs, { action: "archive sessions", mutating: true });
    const split = splitByArchived(store, ids, false);
    refuseBusy(store, split.changed, "archive sessions", options.force);
    setArchivedAt(store, split.changed, store.clock.now());
    return split;
  });
  if (result.changed.length > 0) {
    await (options.hooks ?? noHooks).onSessionDelete({
      session_id: result.changed[0]!,
      reason: "archive",
      deleted_ids: result.changed,
    });
  }
  return result;
}

/** Makes archived sessions visible again; fires no hook (plugins only hear about removals). */
export function unarchiveSessions(store: Store, refs: readonly string[]): ArchiveResult {
  return store.immediate(() => {
    const ids = resolveSessionIds(store, refs, { action: "unarchive sessions", mutating: true });
    const split = splitByArchived(store, ids, true);
    setArchivedAt(store, split.changed, null);
    return split;
  });
}

/** Deletes session rows; the caller holds the write transaction. */
export function deleteRows(store: Store, ids: readonly string[]): void {
  const list = JSON.stringify(ids);
  store.stmt(
    "UPDATE schedule_runs SET session_id = NULL WHERE session_id IN (SELECT value FROM json_each(?))",
  )
    .run(list);
  store.stmt("DELETE FROM sessions WHERE id IN (SELECT value FROM json_each(?))").run(list);
}

function refuseBusy(store: Store, ids: readonly string[], action: string, force: boolean | undefined): void {
  if (force || ids.length === 0) return;
  const busy = findBusySessions(store, ids);
  if (busy.length > 0) throw new SessionBusyError(action, busy);
}

/** Splits `ids` into those whose archived state is `archived` (to change) and the rest. */
function splitByArchived(store: Store, ids: readonly string[], archived: boolean): ArchiveResult {
  const archivedIds = new Set(
    store.stmt(
      "SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?)) AND archived_at IS NOT NULL",
    )
      .all(JSON.stringify(ids)).map((row) => String(row.id)),
  );
  const changed = ids.filter((id) => archivedIds.has(id) === archived);
  return { changed, unchanged: ids.filter((id) => !changed.includes(id)) };
}

function setArchivedAt(store: Store, ids: readonly string[], at: number | null): void {
  if (ids.length === 0) return;
  store.stmt("UPDATE sessions SET archived_at = ? WHERE id IN (SELECT value FROM json_each(?))")
    .run(at, JSON.stringify(ids));
}
