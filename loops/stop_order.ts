/**
 * What happens after a loop tick, in the contract's order: a `LOOP_COMPLETE` line → done; `--until`
 * judged yes → done (blocked → paused; a judge error keeps looping); `--times` reached → done;
 * `loops.max_ticks` reached → paused; else continue.
 */
import { hasLoopComplete, type Verdict } from "./loop_text.ts";

export type TickDecision =
  | { action: "done"; reason: "complete" | "until" | "times" }
  | { action: "pause"; reason: "blocked" | "max_ticks" }
  | { action: "continue"; judge_error?: string };

export interface TickFacts {
  reply: string;
  /** Ticks completed, this one included. */
  tick: number;
  /** Ticks completed since the loop was started or last resumed, this one included. */
  ticks_since_resume: number;
  times: number | null;
  max_ticks: number;
  until: string | null;
  /** Asks the judge about `until`; called only when a verdict is needed. */
  judge: (condition: string, reply: string) => Promise<Verdict>;
}

export async function decideAfterTick(facts: TickFacts): Promise<TickDecision> {
  if (hasLoopComplete(facts.reply)) return { action: "done", reason: "complete" };
  let judgeError: string | undefined;
  if (facts.until !== null) {
    try {
      const verdict = await facts.judge(facts.until, facts.reply);
      if (verdict === "yes") return { action: "done", reason: "until" };
      if (verdict === "blocked") return { action: "pause", reason: "blocked" };
    } catch (error) {
      judgeError = error instanceof Error ? error.message : String(error);
    }
  }
  if (facts.times !== null && facts.tick >= facts.times) return { action: "done", reason: "times" };
  if (facts.ticks_since_resume >= facts.max_ticks) return { action: "pause", reason: "max_ticks" };
  return judgeError === undefined ? { action: "continue" } : { action: "continue", judge_error: judgeError };
}
