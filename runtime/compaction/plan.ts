/**
 * What a compaction pass decides once it holds the lease: nothing, a refusal, a failure, or a set of rows to
 * archive and replacements to insert. The planners (hard.ts, micro.ts, proactive pruning) share this shape
 * and the one token basis (`measure` with the pass's calibration ratio).
 */
import type { CompactionKind, CompactionStore, ReplacementRow, SessionStore } from "../store/store.ts";
import type { CompactionReason } from "../agent/seams.ts";
import { blockedCuts, selectBoundaries } from "./boundaries.ts";
import { measure } from "./estimate.ts";
import { type PlanRow, tokensOf } from "./rows.ts";
import type { Settings } from "./settings.ts";
import type { SummariseResult } from "./summary_call.ts";
import type { FallbackWhy } from "./fallback.ts";
import { looksLikeSummary } from "./summary.ts";

export type Plan =
  | { type: "nothing"; note: string; why: string }
  | {
    type: "refused";
    note: string;
    summaryTokens: number; /** The answer was no summary at all. */
    notSummary?: boolean;
  }
  | { type: "failed"; note: string; leaseLost: boolean }
  | {
    type: "commit";
    kind: CompactionKind;
    archive: number[];
    insert: ReplacementRow[];
    /** The archived rows (for the absorbed counts). */
    absorbed: PlanRow[];
    /** Tokens of the session's summary after this commit (0: none). */
    summaryTokens: number;
    /** The deterministic fallback ran instead of a summary, and why. */
    fallback?: { why: FallbackWhy; note: string; until?: number };
    /** Summary calls this pass attempted (their outcome is told by `fallback`). */
    summaryCalls?: number;
    detail: Record<string, unknown>;
  };

export interface PlanContext {
  sessionId: string;
  store: CompactionStore & SessionStore;
  /** Tokens every request carries besides the rows (the tool definitions), on the pass's basis. */
  overheadTokens?: number;
  /** Summary calls are paused (breaker) or cooling down: the ladder skips to the fallback. */
  summaryBlocked?: { reason: "breaker" | "cooldown" | "lease_held"; note: string; until?: number };
  /** The active rows, prompt order. */
  rows: PlanRow[];
  ratio: number;
  settings: Settings;
  reason: CompactionReason;
  focus?: string;
  /** Tokens of `rows` on the pass's basis. */
  before: number;
  /** One summary of `rows` (previous summaries among them are updated, not nested). */
  summarise(rows: readonly PlanRow[]): Promise<SummariseResult>;
}

/**
 * The middle and its surroundings, with the tail walked by the tail budget on the pass's basis. A manual pass
 * (`/compress`, `hermes sessions compact`) is asked to compact as much as it may: its tail is the
 * `protect_last` floor alone.
 */
export function layout(ctx: Pick<PlanContext, "rows" | "ratio" | "settings" | "reason">) {
  const { rows, ratio, settings } = ctx;
  const { head, tail } = selectBoundaries(rows, {
    protect_first: settings.protect_first,
    protect_last: settings.protect_last,
    ...(ctx.reason === "manual" ? {} : { tailBudget: settings.tailBudget }),
    tokens: (i) => rows[i]!.tokens * ratio,
  });
  return { head, tail, middle: rows.slice(head, tail), tailRows: rows.slice(tail) };
}

/** Tokens of the session's active summary rows. */
export function summaryTokensOf(rows: readonly PlanRow[], ratio: number): number {
  return measure(rows.filter((r) => r.kind === "summary"), ratio);
}

/**
 * The complete assistant exchanges of `rows[head, tail)`, oldest first: runs of assistant messages, tool calls
 * and tool results between two user messages (or a summary), with every tool call answered inside the run.
 * A run the tail cuts, or that ends the transcript, is not complete.
 */
export function completeExchanges(rows: readonly PlanRow[], head: number, tail: number): PlanRow[][] {
  const blocked = blockedCuts(rows);
  const boundary = (r: PlanRow | undefined) => r !== undefined && (r.role === "user" || r.kind === "summary");
  const exchanges: PlanRow[][] = [];
  let i = head;
  while (i < tail) {
    if (boundary(rows[i]) || rows[i]!.role === "system") {
      i++;
      continue;
    }
    let end = i;
    while (end < rows.length && !boundary(rows[end]) && rows[end]!.role !== "system") end++;
    if (end <= tail && end < rows.length && !blocked[i] && !blocked[end]) {
      exchanges.push(rows.slice(i, end));
    }
    i = end;
  }
  return exchanges;
}

/** A summary that passed the anti-growth rule: its content and both sides of the comparison. */
export interface SmallerSummary {
  ok: true;
  content: string;
  summaryTokens: number;
  replacedTokens: number;
  calls: number;
}

/**
 * Summarises `replaced`, wraps the text with `wrap`, and applies the anti-growth rule every summarising pass
 * shares (docs/compaction.md): a summary no smaller than the rows it replaces is refused. `what` names what would be
 * replaced, for the refusal note.
 */
export async function summariseSmaller(
  ctx: Pick<PlanContext, "summarise" | "ratio">,
  replaced: readonly PlanRow[],
  options: { wrap: (text: string) => string; what: string; subject: string },
): Promise<SmallerSummary | Extract<Plan, { type: "refused" | "failed" }>> {
  const summary = await ctx.summarise(replaced);
  if (!summary.ok) return { type: "failed", note: summary.error, leaseLost: summary.leaseLost };
  const content = options.wrap(summary.text);
  const summaryTokens = Math.ceil(tokensOf(content.length) * ctx.ratio);
  const replacedTokens = measure(replaced, ctx.ratio);
  if (summaryTokens >= replacedTokens) {
    return {
      type: "refused",
      summaryTokens,
      note:
        `refused: the ${options.subject} (${summaryTokens} tokens) is not smaller than ${options.what} it would replace (${replacedTokens} tokens)`,
    };
  }
  if (!looksLikeSummary(summary.text)) {
    return {
      type: "refused",
      summaryTokens,
      notSummary: true,
      note: `refused: the ${options.subject} has none of the sections asked for (it is not a summary)`,
    };
  }
  return { ok: true, content, summaryTokens, replacedTokens, calls: summary.calls };
}
