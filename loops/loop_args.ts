/** `/loop [every] [INTERVAL] PROMPT [--times N] [--until CONDITION]` and `/loop status|pause|resume|stop`. */
import { ValidationError } from "../runtime/core/errors.ts";
import { compactInterval, requirePositive } from "./interval.ts";

export type LoopControl = "status" | "pause" | "resume" | "stop";

export interface LoopStart {
  kind: "start";
  prompt: string;
  /** null: self-paced. */
  interval_ms: number | null;
  interval_text: string | null;
  times: number | null;
  until: string | null;
}

export type LoopArgs = { kind: "control"; action: LoopControl } | LoopStart;

const USAGE =
  "expected /loop [every] [INTERVAL] PROMPT [--times N] [--until CONDITION] or /loop status|pause|resume|stop";
const FLAG = /(^|\s)--(times|until)(?=\s|=|$)/g;

export function parseLoopArgs(args: string): LoopArgs {
  const text = args.trim();
  const control = /^(status|pause|resume|stop)$/i.exec(text);
  if (control) return { kind: "control", action: control[1]!.toLowerCase() as LoopControl };
  if (text === "") throw new ValidationError(`Invalid /loop: ${USAGE}`);

  const flags = [...text.matchAll(FLAG)].map((m) => ({ name: m[2]!, at: m.index! + m[1]!.length }));
  const head = text.slice(0, flags[0]?.at ?? text.length).trim();
  let times: number | null = null;
  let until: string | null = null;
  flags.forEach((flag, i) => {
    const end = flags[i + 1]?.at ?? text.length;
    const value = text.slice(flag.at + flag.name.length + 2, end).replace(/^=/, "").trim();
    if (flag.name === "times") {
      if (times !== null) throw new ValidationError("Invalid /loop: --times given twice");
      if (!/^\d+$/.test(value) || Number(value) < 1) {
        throw new ValidationError(
          `Invalid /loop --times "${value}": expected a whole number of ticks, 1 or more`,
        );
      }
      times = Number(value);
    } else {
      if (until !== null) throw new ValidationError("Invalid /loop: --until given twice");
      until = unquote(value);
      if (until === "") {
        throw new ValidationError("Invalid /loop --until: expected a condition, e.g. --until CI is green");
      }
    }
  });

  const tokens = [...head.matchAll(/\S+/g)];
  const words = tokens.map((m) => m[0]);
  let at = 0;
  if (words[0]?.toLowerCase() === "every") {
    at = 1;
    if (words[1] === undefined || compactInterval(words[1]) === null) {
      throw new ValidationError(
        `Invalid /loop: expected an interval like 30s, 5m or 1h30m after "every", got "${words[1] ?? ""}"`,
      );
    }
  }
  let intervalMs: number | null = null;
  let intervalText: string | null = null;
  const candidate = words[at];
  const parsed = candidate === undefined ? null : compactInterval(candidate);
  if (parsed !== null) {
    intervalMs = requirePositive(parsed, candidate!, "/loop");
    intervalText = candidate!;
    at++;
  }
  const prompt = unquote(at === 0 ? head : head.slice(tokens[at - 1]!.index! + words[at - 1]!.length));
  if (prompt === "") throw new ValidationError(`Invalid /loop: missing PROMPT; ${USAGE}`);
  return { kind: "start", prompt, interval_ms: intervalMs, interval_text: intervalText, times, until };
}

function unquote(text: string): string {
  const trimmed = text.trim();
  const match = /^(["'])([\s\S]*)\1$/.exec(trimmed);
  return (match ? match[2]! : trimmed).trim();
}
