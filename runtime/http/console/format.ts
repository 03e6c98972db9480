/**
 * How the console writes values: plain text a person reads without colour (a status is its word, with a
 * symbol beside it), times in UTC, and any stored text with its control characters shown, not acted on.
 */
import { visibleText } from "../../core/visible.ts";

/** The symbol shown before a status word (the word alone carries the meaning; the symbol helps a scan). */
const SYMBOLS: Record<string, string> = {
  queued: "○",
  running: "◐",
  waiting_approval: "⏸",
  success: "✓",
  failed: "✗",
  limit: "!",
  interrupted: "■",
  cancelled: "⊘",
  crashed: "✗",
};

export function statusSymbol(status: string): string {
  return SYMBOLS[status] ?? "·";
}

/** `2026-12-07 20:31:05` (UTC). */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}

/** `850 ms`, `12.3 s`, `4 m 05 s`, `2 h 03 m`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} m`;
}

/** `12 345`. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
}

/** `$0.0123`; unknown price `—`. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return "—";
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/**
 * Stored text as a person should see it: control characters (terminal escapes such as OSC 52, NUL, CR,
 * bidirectional overrides) as visible escapes. HTML needs no care here: the JSX renderer escapes every text
 * and attribute, and the console never writes raw HTML.
 */
export function shown(text: string): string {
  return visibleText(text);
}

/** A value as indented JSON, shown as text. */
export function shownJson(value: unknown): string {
  return shown(JSON.stringify(value, null, 2) ?? "null");
}
