/**
 * Deleting and archiving sessions: one store operation each (resolve, re-check, change, all or none), then
 * `on_session_delete` exactly once after the commit, only if something changed. Unarchiving fires no hook
 * (plugins only hear about removals): it is `store.unarchiveSessions`.
 */
import { type Hooks, noHooks } from "../core/hooks.ts";
import type { AdminStore, ArchiveResult } from "../store/store.ts";

export type { ArchiveResult };

export interface RemoveOptions {
  hooks?: Hooks;
  /** Act even on sessions a live process holds (see `store.findBusySessions`). */
  force?: boolean;
}

/**
 * Deletes the sessions with their messages, state, compaction leases and log; schedule runs keep their slot
 * but lose the session reference. An unknown id or a busy session (unless `force`) rejects and nothing is
 * deleted. Returns the deleted ids.
 */
export async function deleteSessions(
  store: AdminStore,
  refs: readonly string[],
  options: RemoveOptions = {},
): Promise<string[]> {
  const ids = await store.deleteSessions(refs, options.force ? { force: true } : {});
  if (ids.length > 0) {
    await (options.hooks ?? noHooks).onSessionDelete({
      session_id: ids[0]!,
      reason: "delete",
      deleted_ids: ids,
    });
  }
  return ids;
}

/** Hides sessions from `list` and keeps everything. Already archived sessions are left alone (no hook for them). */
export async function archiveSessions(
  store: AdminStore,
  refs: readonly string[],
  options: RemoveOptions = {},
): Promise<ArchiveResult> {
  const result = await store.archiveSessions(refs, options.force ? { force: true } : {});
  if (result.changed.length > 0) {
    await (options.hooks ?? noHooks).onSessionDelete({
      session_id: result.changed[0]!,
      reason: "archive",
      deleted_ids: result.changed,
    });
  }
  return result;
}
