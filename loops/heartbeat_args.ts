/** `/heartbeat every INTERVAL PROMPT` and `/heartbeat status|pause|resume|clear`. */
import { ValidationError } from "../runtime/core/errors.ts";
import { requirePositive, spelledInterval } from "./interval.ts";

export type HeartbeatControl = "status" | "pause" | "resume" | "clear";

export interface HeartbeatSet {
  kind: "set";
  prompt: string;
  interval_ms: number;
  interval_text: string;
}

export type HeartbeatArgs = { kind: "control"; action: HeartbeatControl } | HeartbeatSet;

const USAGE = 'expected /heartbeat every INTERVAL PROMPT (e.g. "every 30m check the inbox") ' +
  "or /heartbeat status|pause|resume|clear";

export function parseHeartbeatArgs(args: string): HeartbeatArgs {
  const text = args.trim();
  const control = /^(status|pause|resume|clear)$/i.exec(text);
  if (control) return { kind: "control", action: control[1]!.toLowerCase() as HeartbeatControl };
  const tokens = [...text.matchAll(/\S+/g)];
  const words = tokens.map((m) => m[0]);
  const at = words[0]?.toLowerCase() === "every" ? 1 : 0;
  const interval = spelledInterval(words.slice(at));
  if (!interval) {
    throw new ValidationError(`Invalid /heartbeat: "${words[at] ?? ""}" is not an interval; ${USAGE}`);
  }
  const intervalText = words.slice(at, at + interval.used).join(" ");
  requirePositive(interval.ms, intervalText, "/heartbeat");
  const last = tokens[at + interval.used - 1]!;
  const prompt = text.slice(last.index! + last[0].length).trim().replace(/^(["'])([\s\S]*)\1$/, "$2").trim();
  if (prompt === "") throw new ValidationError(`Invalid /heartbeat: missing PROMPT; ${USAGE}`);
  return { kind: "set", prompt, interval_ms: interval.ms, interval_text: intervalText };
}
