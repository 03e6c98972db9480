/**
 * The last rung of the ladder: the tail yields. Its protection is a token budget first; when even a middle
 * reduced to a summary or marker leaves the transcript over the threshold, the tail shrinks to what cannot
 * go — the latest user message and the current tool round (or, when the prompt is in the head, the current
 * round alone) — and tool results left in it are cut to fit: head and end kept around a marker, the whole
 * text archived (`sessions show --all`).
 */
import type { SessionStore } from "../store/store.ts";
import { currentRoundStart, lastRealUserIndex } from "./boundaries.ts";
import { cutText } from "./cut.ts";
import { type PrunePlan, replaceToolResult } from "./prune.ts";
import type { PlanRow } from "./rows.ts";

/** A tool result is never cut below this many characters: its head and end still say what it was. */
export const MIN_CUT_CHARS = 600;

/** Where the tail starts once it has yielded everything it may: never before `tail`, never into the head. */
export function yieldedTailStart(rows: readonly PlanRow[], head: number, tail: number): number {
  const lastUser = lastRealUserIndex(rows);
  const start = lastUser >= head ? lastUser : currentRoundStart(rows);
  return Math.max(tail, head, start);
}

/**
 * Cuts the tool results among `candidates` (largest first, all to one length, not below MIN_CUT_CHARS) so
 * that together they shrink by `excessTokens` (on the `ratio` basis) if they can; the cut copies replace
 * the originals, which are archived.
 */
export async function cutToFit(
  store: SessionStore,
  candidates: readonly PlanRow[],
  options: { excessTokens: number; ratio: number; sessionId: string },
): Promise<PrunePlan> {
  const plan: PrunePlan = { archive: [], insert: [], savedTokens: 0 };
  const results = candidates.filter((r) => r.role === "tool" && r.chars > MIN_CUT_CHARS);
  if (results.length === 0 || options.excessTokens <= 0) return plan;
  const needChars = Math.ceil((options.excessTokens / options.ratio) * 4);
  const cap = capFor(results.map((r) => r.chars), needChars);
  const cut = results.filter((r) => r.chars > cap);
  const contents = await store.messageContents(cut.map((r) => r.id), null);
  for (const row of cut) {
    const content = cutText(contents.get(row.id) ?? "", cap, {
      why: "cut to fit the context window",
      sessionId: options.sessionId,
    });
    replaceToolResult(plan, row, content);
  }
  return plan;
}

/** The largest length (≥ MIN_CUT_CHARS) to which cutting `sizes` frees at least `need` characters. */
export function capFor(sizes: readonly number[], need: number): number {
  const freed = (cap: number) => sizes.reduce((n, s) => n + Math.max(0, s - cap), 0);
  if (freed(MIN_CUT_CHARS) <= need) return MIN_CUT_CHARS;
  let low = MIN_CUT_CHARS;
  let high = Math.max(...sizes);
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (freed(mid) >= need) low = mid;
    else high = mid;
  }
  return low;
}
