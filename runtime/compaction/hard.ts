/**
 * The hard compaction plan (kinds `prune_tool_results` and `summarize`), in order of cost:
 * 1. automatic passes first prune old tool results of the middle; when that alone gets under the threshold,
 *    no model is called;
 * 2. otherwise the middle (with the previous summary, which is updated rather than nested) is summarised by
 *    the model; a summary that is not smaller than what it replaces is refused;
 * 3. when even that leaves the transcript over the threshold, tool results of the protected tail beyond the
 *    newest few are pruned in the same commit — and when the middle is empty (everything is protected), they
 *    are pruned alone.
 */
import { layout, type Plan, type PlanContext, summariseSmaller, summaryTokensOf } from "./plan.ts";
import { mergePlans, planPrune, type PrunePlan, tailBeyondNewest } from "./prune.ts";
import type { PlanRow } from "./rows.ts";
import { summaryContent, summaryRole } from "./summary.ts";

const NO_PRUNE: PrunePlan = { archive: [], insert: [], savedTokens: 0 };

export async function planHard(ctx: PlanContext): Promise<Plan> {
  const { rows, ratio, settings, sessionId, before } = ctx;
  const { head, tail, middle, tailRows } = layout(ctx);
  const pruning = ctx.reason !== "manual" && settings.prune;
  const saved = (plan: PrunePlan) => Math.ceil(plan.savedTokens * ratio);
  const middlePrune = pruning ? planPrune(middle, sessionId) : NO_PRUNE;
  const tailPrune = pruning
    ? planPrune(tailBeyondNewest(tailRows, settings.tailBudget, (r) => r.tokens * ratio), sessionId)
    : NO_PRUNE;
  const detail = {
    head,
    tail: rows.length - tail,
    watermark: rows.reduce((max, m) => Math.max(max, m.seq), 0),
  };
  const pruneCommit = (plan: PrunePlan): Plan => ({
    type: "commit",
    kind: "prune_tool_results",
    archive: plan.archive,
    insert: plan.insert,
    absorbed: rows.filter((r) => plan.archive.includes(r.id)),
    summaryTokens: summaryTokensOf(rows, ratio),
    detail,
  });

  if (middlePrune.archive.length > 0 && before - saved(middlePrune) < settings.limit) {
    return pruneCommit(middlePrune);
  }
  if (middle.every((m) => m.kind === "summary")) {
    const all = mergePlans(middlePrune, tailPrune);
    if (all.archive.length > 0) return pruneCommit(all);
    return head >= tail
      ? {
        type: "nothing",
        why: "all_protected",
        note: "nothing to compact: every message is protected (head, tail or tool call)",
      }
      : {
        type: "nothing",
        why: "nothing_new",
        note: "nothing to compact: nothing new since the last summary",
      };
  }

  // Summaries outside the middle (there is at most one; a changed protect_first may leave one elsewhere) are
  // folded in too, so that the transcript never carries two.
  const inMiddle = new Set(middle.map((r) => r.id));
  const previous = rows.filter((r) => r.kind === "summary" && !inMiddle.has(r.id));
  const replaced: PlanRow[] = [...previous, ...middle];
  const summary = await summariseSmaller(ctx, replaced, {
    wrap: (text) => summaryContent(text, middle.length),
    subject: "summary",
    what: `the ${replaced.length} messages`,
  });
  if (!("ok" in summary)) return summary;
  const { content, summaryTokens, replacedTokens } = summary;
  const extra = before - replacedTokens + summaryTokens >= settings.limit ? tailPrune : NO_PRUNE;
  return {
    type: "commit",
    kind: "summarize",
    archive: [...replaced.map((r) => r.id), ...extra.archive],
    insert: [
      {
        role: summaryRole(rows[head - 1]?.role, rows[tail]?.role),
        content,
        kind: "summary",
        pos: middle[0]!.pos,
      },
      ...extra.insert,
    ],
    absorbed: [...replaced, ...rows.filter((r) => extra.archive.includes(r.id))],
    summaryTokens,
    detail: {
      ...detail,
      summary_model: settings.summaryModel,
      summary_calls: summary.calls,
      ...(extra.archive.length ? { tail_pruned: extra.archive.length } : {}),
      ...(ctx.focus ? { focused: true } : {}),
    },
  };
}
