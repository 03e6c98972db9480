/**
 * The hard compaction plan (kinds `prune_tool_results` and `summarize`): a ladder, cheapest rung first, that
 * an automatic pass climbs until the transcript fits, aiming at the low-water mark so the next pass is far
 * away (every rewrite breaks the provider's prefix cache from where it starts):
 * 1. prune old tool results of the middle — committed alone when that gets down to the low-water mark;
 * 2. summarise the middle (the previous summary is updated, not nested); a summary no smaller than what it
 *    replaces is refused;
 * 3. the deterministic fallback (fallback.ts) when the summary failed, timed out, was refused, is paused by
 *    the breaker or a cooldown, or is not worth a call: the middle is dropped behind one marker;
 * 4. the tail yields (tail_yield.ts): when the head, the summary and the tail are still over the threshold,
 *    the tail shrinks to the latest user message and the current round, its older tool results are pruned
 *    and the rest cut to fit.
 * Every rung is one commit through the lease. A manual pass (`/compress`) summarises as much as it may and
 * reports a failure or refusal instead of falling back.
 */
import { currentRoundStart } from "./boundaries.ts";
import { measure } from "./estimate.ts";
import { type FallbackWhy, markerContent } from "./fallback.ts";
import { layout, type Plan, type PlanContext, summariseSmaller, summaryTokensOf } from "./plan.ts";
import { mergePlans, planPrune, type PrunePlan, tailBeyondNewest } from "./prune.ts";
import { type PlanRow, tokensOf } from "./rows.ts";
import { summaryContent, summaryRole } from "./summary.ts";
import { cutToFit, yieldedTailStart } from "./tail_yield.ts";

const NO_PRUNE: PrunePlan = { archive: [], insert: [], savedTokens: 0 };

/** What a summary is expected to take (chars/4): a short six-section summary and its marker line. */
export const EXPECTED_SUMMARY_TOKENS = 400;

export async function planHard(ctx: PlanContext): Promise<Plan> {
  const { rows, ratio, settings, sessionId, before } = ctx;
  const automatic = ctx.reason !== "manual";
  const pruning = automatic && settings.prune;
  const overhead = ctx.overheadTokens ?? 0;
  const saved = (plan: PrunePlan) => Math.ceil(plan.savedTokens * ratio);
  let { head, tail } = layout(ctx);
  const detail: Record<string, unknown> = {
    head,
    watermark: rows.reduce((max, m) => Math.max(max, m.seq), 0),
  };
  const pruneCommit = (plan: PrunePlan): Plan => ({
    type: "commit",
    kind: "prune_tool_results",
    archive: plan.archive,
    insert: plan.insert,
    absorbed: rows.filter((r) => plan.archive.includes(r.id)),
    summaryTokens: summaryTokensOf(rows, ratio),
    detail: { ...detail, tail: rows.length - tail },
  });

  // Rung 1: pruning the middle alone is enough when it gets down to the low-water mark.
  const middlePrune = pruning ? planPrune(rows.slice(head, tail), sessionId) : NO_PRUNE;
  if (middlePrune.archive.length > 0 && before + overhead - saved(middlePrune) <= settings.lowWater) {
    return pruneCommit(middlePrune);
  }

  // Rung 4 is decided first, so that the middle the summary covers is the one that will be replaced: the
  // tail yields when, with the middle replaced by a summary, the pruned tail would keep it over the threshold.
  // The current round's results are never pruned: the model has just asked for them (rung 4 cuts them).
  const round = currentRoundStart(rows);
  const tailPruneOf = (start: number) =>
    pruning
      ? planPrune(
        tailBeyondNewest(rows.slice(start, Math.max(start, round)), settings.tailBudget, (r) =>
          r.tokens * ratio),
        sessionId,
      )
      : NO_PRUNE;
  const expected = Math.ceil(EXPECTED_SUMMARY_TOKENS * ratio);
  const projected = (start: number) =>
    measure(rows.slice(0, head), ratio) + expected + measure(rows.slice(start), ratio) -
    saved(tailPruneOf(start)) + overhead;
  let yielded = false;
  if (automatic && projected(tail) > settings.limit) {
    const start = yieldedTailStart(rows, head, tail);
    if (start > tail) {
      tail = start;
      yielded = true;
    }
  }
  const middle = rows.slice(head, tail);
  const tailRows = rows.slice(tail);
  const tailPrune = tailPruneOf(tail);
  detail.tail = rows.length - tail;
  if (yielded) detail.tail_yielded = true;

  if (middle.every((m) => m.kind === "summary")) {
    const all = mergePlans(middlePrune, tailPrune);
    const cut = automatic
      ? await cutRest(ctx, tailRows, all, before + overhead - saved(all) - settings.limit)
      : NO_PRUNE;
    const everything = mergePlans(all, cut);
    if (everything.archive.length > 0) return pruneCommit(everything);
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

  // Rungs 2 and 3: a summary when one may be had and is worth a call, else the marker.
  let fallback: { why: FallbackWhy; note: string; until?: number } | null = ctx.summaryBlocked
    ? {
      why: ctx.summaryBlocked.reason,
      note: ctx.summaryBlocked.note,
      ...(ctx.summaryBlocked.until !== undefined ? { until: ctx.summaryBlocked.until } : {}),
    }
    : !automatic || worthSummarising(replaced, ratio, expected)
    ? null
    : { why: "infeasible", note: "the middle is too small to be worth a summary call" };
  let content = "";
  let summaryTokens = 0;
  let calls = 0;
  if (!fallback) {
    const summary = await summariseSmaller(ctx, replaced, {
      wrap: (text) => summaryContent(text, middle.length),
      subject: "summary",
      what: `the ${replaced.length} messages`,
    });
    if ("ok" in summary) {
      ({ content, summaryTokens, calls } = summary);
    } else if (!automatic || (summary.type === "failed" && summary.leaseLost)) {
      return summary;
    } else {
      const why = summary.type === "failed"
        ? "summary_failed"
        : summary.notSummary
        ? "not_a_summary"
        : "refused_growth";
      fallback = { why, note: summary.note };
      calls = 1;
    }
  }
  if (fallback) {
    content = await markerContent(ctx.store, {
      sessionId,
      dropped: replaced,
      why: fallback.why,
      budgetChars: settings.markerChars,
    });
    summaryTokens = Math.ceil(tokensOf(content.length) * ratio);
  }
  let after = before + overhead - measure(replaced, ratio) + summaryTokens;
  const extra = automatic && after > settings.lowWater ? tailPrune : NO_PRUNE;
  after -= saved(extra);
  const cut = automatic ? await cutRest(ctx, tailRows, extra, after - settings.limit) : NO_PRUNE;
  const tailChanges = mergePlans(extra, cut);
  return {
    type: "commit",
    kind: "summarize",
    archive: [...replaced.map((r) => r.id), ...tailChanges.archive],
    insert: [
      {
        role: summaryRole(rows[head - 1]?.role, rows[tail]?.role),
        content,
        kind: "summary",
        pos: middle[0]!.pos,
      },
      ...tailChanges.insert,
    ],
    absorbed: [...replaced, ...rows.filter((r) => tailChanges.archive.includes(r.id))],
    summaryTokens,
    ...(fallback ? { fallback } : {}),
    summaryCalls: calls,
    detail: {
      ...detail,
      summary_model: settings.summaryModel,
      summary_calls: calls,
      ...(fallback ? { fallback: fallback.why, dropped: replaced.length } : {}),
      ...(extra.archive.length ? { tail_pruned: extra.archive.length } : {}),
      ...(cut.archive.length ? { tail_cut: cut.archive.length } : {}),
      ...(ctx.focus ? { focused: true } : {}),
    },
  };
}

/** A summary call pays when what it replaces is well over what a summary takes. */
function worthSummarising(replaced: readonly PlanRow[], ratio: number, expected: number): boolean {
  const previous = measure(replaced.filter((r) => r.kind === "summary"), ratio);
  return measure(replaced, ratio) >= 2 * Math.max(expected, previous);
}

/** Cuts tool results of the tail that `done` did not already replace, to shed `excess` tokens. */
function cutRest(ctx: PlanContext, tailRows: readonly PlanRow[], done: PrunePlan, excess: number) {
  if (excess <= 0) return Promise.resolve(NO_PRUNE);
  const replaced = new Set(done.archive);
  return cutToFit(ctx.store, tailRows.filter((r) => r.kind === "message" && !replaced.has(r.id)), {
    excessTokens: excess,
    ratio: ctx.ratio,
    sessionId: ctx.sessionId,
  });
}
