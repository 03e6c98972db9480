/**
 * `proactive_prune` (docs/compaction.md `compaction.prune_min`): between turns, below the threshold, old tool results of
 * the middle are pruned only when that frees at least `prune_min` tokens, so small prunes do not commit turn
 * after turn. Checked without the lease first (`pruneWorthIt`), then planned again under it.
 */
import type { CompactionStore, SessionStore } from "../store/store.ts";
import { layout, type Plan, type PlanContext, summaryTokensOf } from "./plan.ts";
import { planPrune } from "./prune.ts";
import { loadPlanRows } from "./rows.ts";
import type { Settings } from "./settings.ts";

export function proactivePlan(ctx: PlanContext, pruneMin: number): Plan {
  const { middle } = layout(ctx);
  const prune = planPrune(middle, ctx.sessionId);
  const saved = Math.ceil(prune.savedTokens * ctx.ratio);
  if (prune.archive.length === 0 || saved < pruneMin) {
    return {
      type: "nothing",
      why: "below_prune_min",
      note: `pruning would free ${saved} tokens, less than compaction.prune_min (${pruneMin})`,
    };
  }
  return {
    type: "commit",
    kind: "prune_tool_results",
    archive: prune.archive,
    insert: prune.insert,
    absorbed: ctx.rows.filter((r) => prune.archive.includes(r.id)),
    summaryTokens: summaryTokensOf(ctx.rows, ctx.ratio),
    detail: { saved_tokens: saved },
  };
}

/** Whether pruning the middle now frees at least `prune_min`. */
export async function pruneWorthIt(
  store: CompactionStore & SessionStore,
  sessionId: string,
  facts: { settings: Settings; ratio: number },
): Promise<boolean> {
  const rows = await loadPlanRows(store, sessionId);
  const { middle } = layout({
    rows,
    ratio: facts.ratio,
    settings: facts.settings,
    reason: "proactive_prune",
  });
  const saved = Math.ceil(planPrune(middle, sessionId).savedTokens * facts.ratio);
  return facts.settings.pruneMin !== null && saved >= facts.settings.pruneMin;
}
