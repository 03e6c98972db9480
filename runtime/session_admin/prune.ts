/** `hermes sessions prune`: deleting sessions idle for longer than a duration, with a dry run that matches. */
import { type Hooks, noHooks } from "../core/hooks.ts";
import type { AdminStore, PruneRequest, PruneResult } from "../store/store.ts";

export interface PruneOptions extends PruneRequest {
  /** `on_session_delete` fires once, after the last deletion, with every id (never in a dry run). */
  hooks?: Hooks;
}

export type PrunePlan = PruneResult;

/**
 * Archived sessions are pruned like any other; sessions held by a live process are skipped, never forced.
 * A dry run reports exactly the ids a real run deletes, unless the store changes in between.
 */
export async function pruneSessions(store: AdminStore, options: PruneOptions): Promise<PrunePlan> {
  const { hooks, ...request } = options;
  const result = await store.pruneSessions(request);
  if (!options.dryRun && result.ids.length > 0) {
    await (hooks ?? noHooks).onSessionDelete({
      session_id: result.ids[0]!,
      reason: "prune",
      deleted_ids: result.ids,
    });
  }
  return result;
}
