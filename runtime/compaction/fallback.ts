/**
 * The deterministic fallback of hard compaction: when a summary cannot be had — the call failed, timed out,
 * was refused as not smaller, is paused by the breaker or a cooldown, or cannot help (the middle is too small
 * to be worth a call) — the middle is dropped and ONE marker takes its place. The marker says how many
 * messages were dropped and that they stay searchable (they are archived through the same lease and commit
 * as a summary, never deleted), quotes the user requests among them (clipped, newest kept), and keeps what
 * the previous summary or marker said, clipped, so nothing the session knew is silently gone. It needs no
 * model, so it always works.
 */
import type { Store } from "../store/store.ts";
import type { PlanRow } from "./rows.ts";
import { SUMMARY_PREFIX } from "./summary.ts";

export const MARKER_PREFIX = "[Hermes compaction marker]";

/** Why the fallback ran instead of a summary (a content-free code for the log and events). */
export type FallbackWhy = "summary_failed" | "refused_growth" | "breaker" | "cooldown" | "infeasible";

const WHY_TEXT: Record<FallbackWhy, string> = {
  summary_failed: "the summary call failed",
  refused_growth: "the summary was not smaller than what it would replace",
  breaker: "summary calls are paused after ineffective attempts",
  cooldown: "summary calls are cooling down after a failure",
  infeasible: "too little to summarise",
};

/** Characters one quoted user request keeps. */
const QUOTE_CHARS = 240;

export interface MarkerInput {
  sessionId: string;
  /** The rows dropped (previous summaries or markers among them are carried over, clipped). */
  dropped: readonly PlanRow[];
  why: FallbackWhy;
  /** Characters the whole marker may take. */
  budgetChars: number;
}

/** The marker's content; reads the user requests and the previous summary among `dropped`. */
export async function markerContent(store: Store, input: MarkerInput): Promise<string> {
  const { dropped } = input;
  const previous = dropped.filter((r) => r.kind === "summary");
  const users = dropped.filter((r) => r.role === "user" && r.kind === "message");
  const contents = await store.messageContents(
    [...previous.map((r) => r.id), ...users.map((r) => r.id)],
    null,
  );
  const count = dropped.length - previous.length +
    previous.reduce((n, r) => n + droppedBefore(contents.get(r.id)), 0);
  const header =
    `${MARKER_PREFIX} ${count} earlier messages of this session were dropped to fit the context ` +
    `window (${WHY_TEXT[input.why]}). They are archived, not deleted, and stay searchable: ` +
    `hermes sessions search TEXT, hermes sessions show ${input.sessionId} --all.`;
  let room = input.budgetChars - header.length;
  const parts = [header];
  // The previous summary or marker gets up to half of what is left; the newest user requests the rest.
  const earlier = previous.map((r) => bodyOf(contents.get(r.id) ?? "")).filter((t) => t !== "").join("\n\n");
  const earlierShown = earlier ? clip(earlier, Math.max(0, Math.floor(room / 2) - 40)) : "";
  room -= earlierShown.length + (earlierShown ? 40 : 0);
  const quotes: string[] = [];
  for (let i = users.length - 1; i >= 0; i--) {
    const quote = `- ${JSON.stringify(clip(contents.get(users[i]!.id) ?? "", QUOTE_CHARS))}`;
    if (quote.length + 1 > room - 60) break;
    quotes.unshift(quote);
    room -= quote.length + 1;
  }
  if (users.length) {
    const more = users.length - quotes.length;
    parts.push(
      `User requests among them, oldest first${more ? ` (${more} older ones not quoted)` : ""}:\n` +
        quotes.join("\n"),
    );
  }
  if (earlierShown) parts.push(`What the session knew before:\n${earlierShown}`);
  return parts.join("\n\n");
}

/** How many messages a previous marker said were dropped (0 for a summary: its rows are counted by it). */
function droppedBefore(content: string | undefined): number {
  const match = content?.match(/^\[Hermes compaction marker\] (\d+) /);
  return match ? Number(match[1]) : 0;
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
