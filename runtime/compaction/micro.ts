/**
 * The micro-compaction plan (kind `micro_summarize`, reason `between_turns`): the oldest complete assistant
 * exchanges of the middle — as many as it takes to get under the micro threshold, at least one — are folded
 * with the previous rolling summary into a new one that replaces it. User messages are never absorbed: they
 * stay verbatim, in order. The new summary takes the place of the newest exchange it folds, so it sits after
 * the user messages whose work it tells and before the next one.
 */
import { measure } from "./estimate.ts";
import { completeExchanges, layout, type Plan, type PlanContext, summariseSmaller } from "./plan.ts";
import type { PlanRow } from "./rows.ts";
import { rollingSummaryContent, summaryRole } from "./summary.ts";

/** Characters of exchanges one pass folds at most: a fifth of what a summary request of that window holds. */
const FOLD_SHARE = 0.2;
/** What a first rolling summary is expected to cost (its marker and a short structured summary). */
const FIRST_SUMMARY_TOKENS = 150;
/** A cached prompt token's price as a share of an uncached one (what providers bill, roughly). */
export const CACHED_PRICE = 0.1;
/** Tokens a summary request carries besides the rows it shows (instructions, framing) and its answer. */
const CALL_OVERHEAD_TOKENS = 700;

/**
 * Whether a fold pays for itself: it removes `removed` tokens from each of the next `horizon` requests —
 * tokens that sat in the cached prefix, so each is worth CACHED_PRICE — and costs its summary call plus the
 * prompt cache it breaks: everything after the fold point is billed once more at the uncached price. With a
 * prompt cache that is rarely true (the default horizon); a long horizon stands for a provider without one.
 */
export function foldPays(
  facts: { removed: number; callTokens: number; rewritten: number; horizon: number },
): boolean {
  return facts.removed * facts.horizon * CACHED_PRICE >=
    facts.callTokens + facts.rewritten * (1 - CACHED_PRICE);
}

export async function planMicro(ctx: PlanContext & { microLimit: number }): Promise<Plan> {
  const { rows, ratio, settings, before } = ctx;
  const { head, tail } = layout(ctx);
  const exchanges = completeExchanges(rows, head, tail);
  if (exchanges.length === 0) {
    return {
      type: "nothing",
      why: "no_exchange",
      note: "nothing to fold: no complete assistant exchange outside the protected head and tail",
    };
  }
  const foldChars = settings.summaryWindow * 4 * FOLD_SHARE;
  const previous = rows.filter((r) => r.kind === "summary");
  // The new summary replaces the previous one and is about its size; a first one costs its scaffolding.
  const previousTokens = measure(previous, ratio);
  const selected: PlanRow[][] = [];
  let remaining = before - previousTokens + Math.max(previousTokens, Math.ceil(FIRST_SUMMARY_TOKENS * ratio));
  let chars = 0;
  for (const exchange of exchanges) {
    const size = exchange.reduce((n, r) => n + r.chars, 0);
    if (selected.length > 0 && chars + size > foldChars) break;
    selected.push(exchange);
    chars += size;
    remaining -= measure(exchange, ratio);
    if (remaining < ctx.microLimit) break;
  }
  const folded = selected.flat();
  const newest = selected.at(-1)!;
  const replaced = [...previous, ...folded];
  const foldedTokens = measure(folded, ratio);
  const firstFolded = rows.indexOf(previous[0] ?? folded[0]!);
  const pays = foldPays({
    removed: foldedTokens - Math.max(0, Math.ceil(FIRST_SUMMARY_TOKENS * ratio) - previousTokens),
    callTokens: measure(replaced, ratio) + CALL_OVERHEAD_TOKENS,
    rewritten: measure(rows.slice(firstFolded), ratio),
    horizon: settings.microPayback,
  });
  if (!pays) {
    return {
      type: "nothing",
      why: "does_not_pay",
      note:
        `folding ${folded.length} messages (${foldedTokens} tokens) would not pay for its summary call and ` +
        `the prompt cache it breaks over the next ${settings.microPayback} requests`,
    };
  }
  const summary = await summariseSmaller(ctx, replaced, {
    wrap: rollingSummaryContent,
    subject: "rolling summary",
    what: `the ${previous.length ? "previous summary and the " : ""}${folded.length} messages`,
  });
  if (!("ok" in summary)) return summary;
  const { content, summaryTokens } = summary;
  return {
    type: "commit",
    kind: "micro_summarize",
    archive: replaced.map((r) => r.id),
    insert: [{
      role: roleAt(rows, newest, new Set(replaced.map((r) => r.id))),
      content,
      kind: "summary",
      pos: newest[0]!.pos,
    }],
    absorbed: replaced,
    summaryTokens,
    detail: {
      head,
      tail: rows.length - tail,
      exchanges: selected.length,
      watermark: rows.reduce((max, m) => Math.max(max, m.seq), 0),
      summary_model: settings.summaryModel,
      summary_calls: summary.calls,
    },
  };
}

/** The summary's role where `exchange` was, against its neighbours once the replaced rows are gone. */
function roleAt(rows: readonly PlanRow[], exchange: readonly PlanRow[], replaced: ReadonlySet<number>) {
  const start = rows.indexOf(exchange[0]!);
  let before = start - 1;
  while (before >= 0 && replaced.has(rows[before]!.id)) before--;
  return summaryRole(rows[before]?.role, rows[start + exchange.length]?.role);
}
