/**
 * Human-readable renderings for a terminal: the session table, a transcript, search hits. Stored text is
 * shown with its control characters as visible escapes (runtime/core/visible.ts): tool output cannot drive
 * the reviewer's terminal, and nothing after a NUL or a CR is hidden.
 */
import { visibleText } from "../../runtime/core/visible.ts";
import { formatUsd } from "../../runtime/core/usd.ts";
import type { MessageRecord, SearchHit, SessionSummary, Transcript } from "../../runtime/app/mod.ts";

export function renderTable(sessions: readonly SessionSummary[]): string {
  if (sessions.length === 0) return "No sessions.\n";
  const header = ["ID", "JOB", "STATUS", "CREATED", "TURNS", "TOKENS"];
  const rows = sessions.map((s) => [
    s.id,
    clip(s.job, 32),
    s.terminal_reason && s.terminal_reason !== "completed" ? `${s.status} (${s.terminal_reason})` : s.status,
    localTime(s.created_at) + (s.archived ? " [archived]" : ""),
    String(s.turns),
    compactNumber(s.prompt_tokens + s.completion_tokens),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return visibleText([line(header), ...rows.map(line)].join("\n") + "\n");
}

export function renderTranscript({ session: s, messages }: Transcript): string {
  const facts = [
    `created ${s.created_at}`,
    ...(s.ended_at ? [`ended ${s.ended_at}`] : []),
    `turns ${s.turns}`,
    `tokens ${s.prompt_tokens} prompt (${s.cached_tokens} cache read, ${s.cache_write_tokens} cache write) / ` +
    `${s.completion_tokens} completion (${s.reasoning_tokens} reasoning)`,
    `cost ${s.cost_usd === null ? "unknown (a model without a known price)" : formatUsd(s.cost_usd)}`,
    ...(s.model ? [`model ${s.model}`] : []),
    ...(s.parent_id ? [`parent ${s.parent_id}`] : []),
    ...(Object.keys(s.labels ?? {}).length
      ? [`labels ${Object.entries(s.labels).map(([key, value]) => `${key}=${value}`).join(", ")}`]
      : []),
    ...(s.archived_at ? [`archived ${s.archived_at}`] : []),
  ];
  const status = `${s.status}${s.terminal_reason ? ` (${s.terminal_reason})` : ""}`;
  const head = `session ${s.id} · job ${s.job} · ${status}\n${facts.join(" · ")}\n`;
  return visibleText(head + messages.map(renderMessage).join(""));
}

function renderMessage(m: MessageRecord): string {
  const who = m.role === "tool"
    ? `tool ${m.name ?? "?"}${m.tool_call_id ? ` (${m.tool_call_id})` : ""}`
    : m.role;
  const marks = [m.kind === "summary" ? "[summary]" : "", m.kind === "pruned" ? "[pruned]" : ""]
    .concat(m.active ? [] : ["[compacted]"]).filter(Boolean);
  const lines = [`\n#${m.seq} ${who}${marks.length ? ` ${marks.join(" ")}` : ""}`];
  if (m.content !== "") lines.push(indent(m.content));
  for (const call of m.tool_calls ?? []) lines.push(`  → ${call.name} (${call.id}) ${call.arguments}`);
  return lines.join("\n") + "\n";
}

export function renderHits(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return "";
  return visibleText(
    hits.map((h) => {
      const marks = [h.kind !== "message" ? `[${h.kind}]` : "", h.active ? "" : "[compacted]"]
        .concat(h.session_archived ? ["[archived]"] : []).filter(Boolean);
      return `${h.session_id} #${h.seq} ${h.role}${marks.length ? ` ${marks.join(" ")}` : ""}  ${h.snippet}`;
    }).join("\n") + "\n",
  );
}

function indent(text: string): string {
  return text.split("\n").map((line) => `  ${line}`).join("\n");
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function compactNumber(n: number): string {
  if (n < 10_000) return String(n);
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `YYYY-MM-DD HH:MM` in the local time zone. */
function localTime(iso: string): string {
  const d = new Date(iso);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${
    two(d.getMinutes())
  }`;
}
