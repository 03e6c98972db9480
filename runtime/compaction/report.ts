/**
 * The compaction report of one session (`hermes sessions compactions ID`), built from its content-free
 * compaction log: how many passes and of which outcome, how many hard compactions fired (ideally none when
 * micro-compaction keeps up), net tokens saved, and occupancy — tokens after each pass as a share of the
 * compaction threshold — over time; and the prompt cache: the share of the session's prompt tokens the
 * provider reported as served from its cache, which every rewrite of earlier messages lowers.
 */
import type { CompactionKind, CompactionLogRow, PassOutcome } from "../store/store.ts";

export const OUTCOMES: readonly PassOutcome[] = [
  "committed",
  "refused_growth",
  "cooldown",
  "breaker",
  "failed",
  "nothing_to_do",
];
const KINDS: readonly CompactionKind[] = ["summarize", "micro_summarize", "prune_tool_results"];

export interface CompactionReport {
  session_id: string;
  passes: number;
  outcomes: Record<PassOutcome, number>;
  /** Committed passes by kind; `summarize` is the hard compaction. */
  committed: Record<CompactionKind, number>;
  hard_compactions: number;
  /**
   * Of the hard compactions, those where the deterministic fallback (a marker, no summary) stood in for a
   * summary: logged as kind `summarize` with `detail.fallback`, counted here so a report tells a session that
   * summarised from one that only dropped its middle.
   */
  fallbacks: number;
  /** Sum of before − after over committed passes (negative: the passes grew the transcript). */
  net_tokens_saved: number;
  /** Occupancy after the passes that have one: the last, the median and the highest. */
  occupancy: { last: number | null; median: number | null; max: number | null };
  /** The session's prompt tokens and those the provider reported cached; the share is null without any. */
  prompt_cache: { prompt_tokens: number; cached_tokens: number; cached_share: number | null };
  /** Every pass, oldest first (the log rows as stored). */
  log: CompactionLogRow[];
}

/** The session's usage counters the report reads (its `sessions` row). */
export interface SessionUsage {
  prompt_tokens: number;
  cached_tokens: number;
}

export function compactionReport(
  sessionId: string,
  log: readonly CompactionLogRow[],
  usage: SessionUsage = { prompt_tokens: 0, cached_tokens: 0 },
): CompactionReport {
  const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<PassOutcome, number>;
  const committed = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<CompactionKind, number>;
  for (const row of log) {
    outcomes[row.outcome] = (outcomes[row.outcome] ?? 0) + 1;
    if (row.outcome === "committed") committed[row.kind] = (committed[row.kind] ?? 0) + 1;
  }
  const occupancies = log.map((r) => r.occupancy).filter((o): o is number => o !== null);
  const sorted = [...occupancies].sort((a, b) => a - b);
  return {
    session_id: sessionId,
    passes: log.length,
    outcomes,
    committed,
    hard_compactions: committed.summarize,
    fallbacks: log.filter((r) => r.outcome === "committed" && r.kind === "summarize" && r.detail.fallback)
      .length,
    net_tokens_saved: log.reduce(
      (n, r) => n + (r.outcome === "committed" ? r.before_tokens - r.after_tokens : 0),
      0,
    ),
    occupancy: {
      last: occupancies.at(-1) ?? null,
      median: sorted.length ? median(sorted) : null,
      max: sorted.at(-1) ?? null,
    },
    prompt_cache: {
      prompt_tokens: usage.prompt_tokens,
      cached_tokens: usage.cached_tokens,
      cached_share: usage.prompt_tokens > 0 ? usage.cached_tokens / usage.prompt_tokens : null,
    },
    log: [...log],
  };
}

function median(sorted: readonly number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const fallbackNote = (n: number) => n === 0 ? "" : ` of which ${n} ${n === 1 ? "fallback" : "fallbacks"}`;

const percent = (share: number | null) => share === null ? "-" : `${Math.round(share * 100)}%`;

/** The report as text: a summary, then one line per pass. */
export function renderReport(report: CompactionReport): string {
  const cache = report.prompt_cache;
  const cacheLine = cache.cached_share === null ? [] : [
    `prompt cache: ${percent(cache.cached_share)} of ${cache.prompt_tokens} prompt tokens cached ` +
    `(${cache.cached_tokens}, as the provider reported)`,
  ];
  if (report.passes === 0) {
    return [`session ${report.session_id}: no compaction passes yet`, ...cacheLine, ""].join("\n");
  }
  const c = report.committed;
  const lines = [
    `session ${report.session_id}: ${report.passes} compaction passes, ${report.outcomes.committed} committed ` +
    `(hard ${c.summarize}${
      fallbackNote(report.fallbacks)
    }, micro ${c.micro_summarize}, prune ${c.prune_tool_results}), ` +
    `net ${report.net_tokens_saved} tokens saved`,
    `outcomes: ${OUTCOMES.map((o) => `${o} ${report.outcomes[o]}`).join(", ")}`,
    `occupancy (tokens after a pass ÷ compaction threshold): last ${percent(report.occupancy.last)}, ` +
    `median ${percent(report.occupancy.median)}, max ${percent(report.occupancy.max)}`,
    ...cacheLine,
    "",
  ];
  const header = ["#", "TIME", "KIND", "REASON", "OUTCOME", "TOKENS", "OCCUPANCY", "ABSORBED", "MS"];
  const rows = report.log.map((r, i) => [
    String(i + 1),
    new Date(r.created_at).toISOString(),
    r.kind,
    r.reason,
    r.outcome,
    r.outcome === "committed" ? `${r.before_tokens} → ${r.after_tokens}` : String(r.before_tokens),
    percent(r.occupancy),
    r.absorbed_messages === null ? "-" : String(r.absorbed_messages),
    r.duration_ms === null ? "-" : String(r.duration_ms),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  return [...lines, line(header), ...rows.map(line)].join("\n") + "\n";
}
