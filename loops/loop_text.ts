/** What the model reads on a loop tick or a heartbeat, and the judge's question for `--until`. */
import { formatDuration } from "../runtime/core/duration.ts";

export const LOOP_COMPLETE = "LOOP_COMPLETE";

export interface TickText {
  prompt: string;
  tick: number;
  /** null: self-paced. */
  interval_ms: number | null;
  times: number | null;
}

export function tickPrompt(t: TickText): string {
  const pace = t.interval_ms === null ? "self-paced" : `every ${formatDuration(t.interval_ms)}`;
  const of = t.times === null ? "" : ` of ${t.times}`;
  return [
    `[Loop tick ${t.tick}${of} — ${pace}]`,
    t.prompt,
    "",
    `This is tick ${t.tick}${of} of a recurring loop; the same prompt comes back on each tick. ` +
    `Do what it asks now. If the loop's goal is reached and it should stop, answer ${LOOP_COMPLETE} ` +
    "on a line of its own.",
  ].join("\n");
}

export function heartbeatPrompt(prompt: string, intervalMs: number): string {
  return [
    `[Heartbeat — every ${formatDuration(intervalMs)}]`,
    prompt,
    "",
    "If nothing needs doing, say so briefly and stop — do not invent work.",
  ].join("\n");
}

/** True when the reply has `LOOP_COMPLETE` on a line of its own (markdown emphasis allowed). */
export function hasLoopComplete(reply: string): boolean {
  return /^[\s*_`>]*LOOP_COMPLETE[\s*_`.!]*$/m.test(reply);
}

export type Verdict = "yes" | "no" | "blocked";

export function judgeQuestion(condition: string, reply: string): string {
  return [
    "You judge whether a recurring task may stop.",
    `Condition: ${condition}`,
    "",
    "Latest reply of the agent doing the task:",
    reply.length > 4000 ? `${reply.slice(0, 4000)}\n[…]` : reply,
    "",
    "Is the condition met? Answer with one word: yes, no, or blocked " +
    "(blocked: it cannot become true without outside help).",
  ].join("\n");
}

/** The judge's one-word answer; null when it said something else. */
export function parseVerdict(answer: string): Verdict | null {
  const word = /^[\s*_`"'.]*([a-z]+)/i.exec(answer)?.[1]?.toLowerCase();
  return word === "yes" || word === "no" || word === "blocked" ? word : null;
}
