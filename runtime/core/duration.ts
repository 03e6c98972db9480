/** The text form of a duration in job and script files, and what to say when a value is not one. */
export const DURATION_PATTERN = /^\s*(\d+(\.\d+)?\s*(ms|s|m|h|d)\s*)+$/;
export const DURATION_EXPECTED = "expected a duration like 30s, 5m or 1h30m";

/** Parses `30s`, `5m`, `1h30m`, `250ms`, `1d` (and bare numbers of seconds) into milliseconds. */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string | number): number {
  if (typeof text === "number") return text * 1000;
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/g)];
  const joined = parts.map((p) => p[0]).join("").replace(/\s/g, "");
  if (parts.length === 0 || joined !== trimmed.replace(/\s/g, "")) {
    throw new RangeError(`Cannot parse duration "${text}": expected a value like 30s, 5m or 1h30m`);
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]!]!, 0);
}

/** Parses `64KiB`, `256MB`, `1024` (bytes) into bytes. */
export function parseSize(text: string | number): number {
  if (typeof text === "number") return text;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i.exec(text);
  if (!match) throw new RangeError(`Cannot parse size "${text}": expected a value like 64KiB or 256MB`);
  const unit = (match[2] ?? "B").toLowerCase();
  const factor: Record<string, number> = {
    b: 1,
    kb: 1000,
    kib: 1024,
    mb: 1_000_000,
    mib: 1024 ** 2,
    gb: 1_000_000_000,
    gib: 1024 ** 3,
  };
  return Math.round(Number(match[1]) * factor[unit]!);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ""}${m ? `${m}m` : ""}${s || (!h && !m) ? `${s}s` : ""}`;
}
