/**
 * With a summary model whose window is smaller than the session's (`compaction.summary_context_window`), a
 * middle that one request could show only clipped below CHUNK_CAP characters per message (or not at all) is
 * summarised in chunks, oldest first, each request carrying the summary so far: the first chunk updates the
 * stored summary, each later one the previous chunk's. At most MAX_CHUNKS calls are made; beyond that the
 * oldest rows are left out and counted. With the session's own window, one request shows the middle clipped
 * to fit (the oldest rows left out when even the smallest cap does not fit), as before.
 */
import type { PlanRow } from "./rows.ts";
import {
  fittingCap,
  planRendering,
  renderedSize,
  type RenderPlan,
  requestBudget,
  SMALLEST_CAP,
  summaryMaxTokens,
} from "./summary.ts";

/** Below this cap a single request would show too little of each message: chunk instead. */
export const CHUNK_CAP = 2000;
export const MAX_CHUNKS = 8;

/** The requests that summarise `middle`. `smallerModel`: the summary model's window is the smaller one. */
export function planChunks(
  middle: readonly PlanRow[],
  contextWindow: number,
  options: { smallerModel?: boolean } = {},
): RenderPlan[] {
  const single = planRendering(middle, contextWindow);
  if (!options.smallerModel || (single.omitted === 0 && single.cap >= CHUNK_CAP)) return [single];
  const previous = middle.filter((r) => r.kind === "summary");
  const rest = middle.filter((r) => r.kind !== "summary");
  // Every chunk shares its request with a summary so far: the stored one, or a previous chunk's answer.
  const reserve = Math.max(previous.reduce((n, r) => n + r.chars, 0), summaryMaxTokens(contextWindow) * 4);
  const budget = requestBudget(contextWindow) - reserve;
  const chunks: PlanRow[][] = [];
  let current: PlanRow[] = [];
  let used = 0;
  for (const row of rest) {
    const size = Math.min(renderedSize(row, CHUNK_CAP), budget);
    if (current.length > 0 && used + size > budget) {
      chunks.push(current);
      current = [];
      used = 0;
    }
    current.push(row);
    used += size;
  }
  if (current.length > 0) chunks.push(current);
  const kept = chunks.slice(-MAX_CHUNKS);
  const omitted = chunks.slice(0, -MAX_CHUNKS).reduce((n, c) => n + c.length, 0);
  return kept.map((rows, i) => {
    const cap = fittingCap(rows, budget);
    return {
      previous: i === 0 ? previous : [],
      shown: rows,
      cap: cap < 0 ? SMALLEST_CAP : cap,
      omitted: i === 0 ? omitted : 0,
    };
  });
}
