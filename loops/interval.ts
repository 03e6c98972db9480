/**
 * Interval tokens of `/loop` and `/heartbeat`: compact forms (`30s`, `5m`, `1h30m`, `250ms`) and, for
 * heartbeats, spelled units (`90 minutes`, `2 hours`, `1 hour 30 minutes`).
 */
import { ValidationError } from "../runtime/core/errors.ts";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const COMPACT = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const COMPACT_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const SPELLED_UNITS: Record<string, string> = {
  ms: "ms",
  millisecond: "ms",
  milliseconds: "ms",
  s: "s",
  sec: "s",
  secs: "s",
  second: "s",
  seconds: "s",
  m: "m",
  min: "m",
  mins: "m",
  minute: "m",
  minutes: "m",
  h: "h",
  hr: "h",
  hrs: "h",
  hour: "h",
  hours: "h",
  d: "d",
  day: "d",
  days: "d",
};
const NUMBER_WITH_WORD = /^(\d+(?:\.\d+)?)([a-z]+)$/;

/** Milliseconds of a compact interval token, or null when `token` is not one (a bare number is not). */
export function compactInterval(token: string): number | null {
  const lower = token.toLowerCase();
  if (!COMPACT.test(lower)) return null;
  let ms = 0;
  for (const part of lower.matchAll(COMPACT_PART)) ms += Number(part[1]) * UNIT_MS[part[2]!]!;
  return ms;
}

/**
 * Reads an interval from the start of `words`, accepting spelled units (`90 minutes`, `2 hours`,
 * `1 hour 30 minutes`, `90min`) as well as compact tokens. Returns how many words it used, or null.
 */
export function spelledInterval(words: readonly string[]): { ms: number; used: number } | null {
  let ms = 0;
  let used = 0;
  while (used < words.length) {
    const word = words[used]!.toLowerCase().replace(/,$/, "");
    const compact = compactInterval(word);
    if (compact !== null) {
      ms += compact;
      used += 1;
      continue;
    }
    const glued = NUMBER_WITH_WORD.exec(word);
    if (glued && SPELLED_UNITS[glued[2]!]) {
      ms += Number(glued[1]) * UNIT_MS[SPELLED_UNITS[glued[2]!]!]!;
      used += 1;
      continue;
    }
    const unit = SPELLED_UNITS[words[used + 1]?.toLowerCase().replace(/,$/, "") ?? ""];
    if (/^\d+(?:\.\d+)?$/.test(word) && unit) {
      ms += Number(word) * UNIT_MS[unit]!;
      used += 2;
      continue;
    }
    break;
  }
  return used === 0 ? null : { ms, used };
}

/** Throws a ValidationError naming the command when an interval is zero. */
export function requirePositive(ms: number, text: string, command: string): number {
  if (ms <= 0) throw new ValidationError(`Invalid ${command}: interval "${text}" must be greater than zero`);
  return ms;
}
