/**
 * Self-paced loops: the delay starts at the floor, doubles while replies stay the same, stops at the
 * ceiling and snaps back to the floor when a reply changes. "The same" is judged on a digest of the
 * reply with times, dates and durations removed, so a clock in the answer does not count as news.
 */
const MONTH = "(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.?";
const WEEKDAY = "(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\\.?";
const VOLATILE: readonly RegExp[] = [
  // ISO timestamps and dates: 2026-01-05, 2026-01-05T10:00:00.123Z, 2026-01-05 10:00:00+01:00
  /\d{4}-\d{2}-\d{2}(?:[t ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:z|[+-]\d{2}:?\d{2})?/gi,
  // 05/01/2026, 1.5.2026
  /\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b/g,
  // Jan 5, 2026 · 5 January 2026 · Monday
  new RegExp(`\\b${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?,?(?:\\s+\\d{4})?`, "gi"),
  new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH}(?:,?\\s+\\d{4})?`, "gi"),
  new RegExp(`\\b${WEEKDAY}(?=[\\s,]|$)`, "gi"),
  // 10:42, 10:42:07.5, 9:05 pm, with an optional zone name
  /\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s*[ap]\.?m\.?)?(?:\s*(?:utc|gmt|[a-z]{2,4}t))?\b/gi,
  // durations: 3m12s, 1h30m, 250ms, 2.5 seconds, 4 minutes ago
  /\b(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+\b/gi,
  /\b\d+(?:\.\d+)?\s*(?:milliseconds?|msecs?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)(?:\s+ago)?\b/gi,
];

/** The reply without times, dates and durations, whitespace and case folded. */
export function normalizeReply(reply: string): string {
  let text = reply;
  for (const pattern of VOLATILE) text = text.replace(pattern, " ");
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/** SHA-256 of the normalised reply, hex, first 32 digits. Web Crypto: node:crypto would add ~7 ms to start-up. */
export async function replyDigest(reply: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(normalizeReply(reply)));
  return Array.from(new Uint8Array(hash), (byte) => byte.toString(16).padStart(2, "0")).join("").slice(0, 32);
}

export interface Pacing {
  floor_ms: number;
  ceiling_ms: number;
}

/** The delay before the next self-paced tick. */
export function nextSelfPacedDelay(
  previous: { digest: string | null; delay_ms: number },
  digest: string,
  pacing: Pacing,
): number {
  if (previous.digest === null || previous.digest !== digest) return pacing.floor_ms;
  return Math.min(Math.max(previous.delay_ms, pacing.floor_ms) * 2, pacing.ceiling_ms);
}
