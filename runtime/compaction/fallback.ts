/**
 * The deterministic fallback of hard compaction: when a summary cannot be had — the call failed, timed out,
 * was refused as not smaller or as no summary at all, is paused by the breaker or a cooldown, or cannot help (the middle is too small
 * to be worth a call) — the middle is dropped and ONE marker takes its place. The marker says how many
 * messages were dropped and that they stay searchable (they are archived through the same lease and commit
 * as a summary, never deleted), quotes the user requests among them (clipped, newest kept), and keeps what
 * the previous summary or marker said, clipped, so nothing the session knew is silently gone. It needs no
 * model, so it always works.
 */
import type { SessionStore } from "../store/store.ts";
import type { PlanRow } from "./rows.ts";
import { SUMMARY_PREFIX } from "./summary.ts";

export const MARKER_PREFIX = "[Hermes compaction marker]";

/** Why the fallback ran instead of a summary (a content-free code for the log and events). */
export type FallbackWhy =
  | "summary_failed"
  | "refused_growth"
  | "not_a_summary"
  | "breaker"
  | "cooldown"
  | "infeasible"
  /** Another process holds the compaction lease: the fallback only shapes one request (fallback_view.ts). */
  | "lease_held";

const WHY_TEXT: Record<FallbackWhy, string> = {
  summary_failed: "the summary call failed",
  refused_growth: "the summary was not smaller than what it would replace",
  not_a_summary: "the summary model's answer was not a summary",
  breaker: "summary calls are paused after ineffective attempts",
  cooldown: "summary calls are cooling down after a failure",
  infeasible: "too little to summarise",
  lease_held: "another process is compacting this session",
};

/** Characters a quoted user request keeps: the newest ones in full, older ones by their beginning. */
const QUOTE_CHARS = 240;
const SHORT_QUOTE_CHARS = 40;
const KNEW_BEFORE = "What the session knew before:\n";
const REQUESTS = "User requests among them, oldest first";

export interface MarkerInput {
  sessionId: string;
  /** The rows dropped (previous summaries or markers among them are carried over, clipped). */
  dropped: readonly PlanRow[];
  why: FallbackWhy;
  /** Characters the whole marker may take. */
  budgetChars: number;
}

/** The marker's content; reads the user requests and the previous summary or marker among `dropped`. */
export async function markerContent(store: SessionStore, input: MarkerInput): Promise<string> {
  const { dropped } = input;
  const previous = dropped.filter((r) => r.kind === "summary");
  const users = dropped.filter((r) => r.role === "user" && r.kind === "message");
  const contents = await store.messageContents(
    [...previous.map((r) => r.id), ...users.map((r) => r.id)],
    null,
  );
  const before = previous.map((r) => parsePrevious(contents.get(r.id) ?? ""));
  const count = dropped.length - previous.length + before.reduce((n, p) => n + p.dropped, 0);
  const header =
    `${MARKER_PREFIX} ${count} earlier messages of this session were dropped to fit the context ` +
    `window (${WHY_TEXT[input.why]}). They are archived, not deleted, and stay searchable: ` +
    `hermes sessions search TEXT, hermes sessions show ${input.sessionId} --all.`;
  // What a previous summary said gets up to a third of the room; the user requests the rest, newest first.
  let room = input.budgetChars - header.length - 4;
  const knew = before.map((p) => p.knew).filter((t) => t !== "").join("\n\n");
  const knewShown = knew ? clip(knew, Math.max(0, Math.floor(room / 3) - KNEW_BEFORE.length)) : "";
  if (knewShown) room -= KNEW_BEFORE.length + knewShown.length + 2;
  const requests = [
    ...before.flatMap((p) => p.requests),
    ...users.map((r) => contents.get(r.id) ?? ""),
  ];
  room -= REQUESTS.length + 40;
  // Every request gets at least its beginning (as many as fit, newest first); then the newest get more.
  const lines = requests.map((text) => quote(text, SHORT_QUOTE_CHARS));
  let first = 0;
  let used = lines.reduce((n, l) => n + l.length + 1, 0);
  while (first < lines.length && used > room) used -= lines[first++]!.length + 1;
  for (let i = lines.length - 1; i >= first; i--) {
    const full = quote(requests[i]!, QUOTE_CHARS);
    if (used + full.length - lines[i]!.length > room) break;
    used += full.length - lines[i]!.length;
    lines[i] = full;
  }
  lines.splice(0, first);
  const parts = [header];
  if (requests.length) {
    const more = requests.length - lines.length;
    parts.push(`${REQUESTS}${more ? ` (${more} older ones not quoted)` : ""}:\n${lines.join("\n")}`);
  }
  if (knewShown) parts.push(KNEW_BEFORE + knewShown);
  return parts.join("\n\n");
}

/** What a previous summary or marker carries into a new marker. */
function parsePrevious(content: string): { dropped: number; requests: string[]; knew: string } {
  if (!content.startsWith(MARKER_PREFIX)) return { dropped: 0, requests: [], knew: bodyOf(content) };
  const dropped = Number(content.match(/^\[Hermes compaction marker\] (\d+) /)?.[1] ?? 0);
  const at = content.indexOf(KNEW_BEFORE);
  const knew = at < 0 ? "" : content.slice(at + KNEW_BEFORE.length);
  const requests: string[] = [];
  for (const line of (at < 0 ? content : content.slice(0, at)).split("\n")) {
    if (!line.startsWith('- "')) continue;
    try {
      requests.push(JSON.parse(line.slice(2)));
    } catch {
      // A line that is not one of ours is left out.
    }
  }
  return { dropped, requests, knew };
}

function quote(text: string, chars: number): string {
  return `- ${JSON.stringify(clip(text.replace(/\s+/g, " ").trim(), chars))}`;
}

function bodyOf(content: string): string {
  for (const prefix of [SUMMARY_PREFIX, MARKER_PREFIX]) {
    if (!content.startsWith(prefix)) continue;
    const body = content.indexOf("\n\n");
    return body < 0 ? "" : content.slice(body + 2);
  }
  return content;
}

function clip(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return `${text.slice(0, Math.max(0, chars - 1))}…`;
}
