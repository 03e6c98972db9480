import assert from "node:assert/strict";
import { hasLoopComplete, heartbeatPrompt, judgeQuestion, parseVerdict, tickPrompt } from "./loop_text.ts";

Deno.test("hasLoopComplete wants LOOP_COMPLETE on a line of its own", () => {
  const table: [string, boolean][] = [
    ["LOOP_COMPLETE", true],
    ["CI is green.\nLOOP_COMPLETE\n", true],
    ["All done.\n\n**LOOP_COMPLETE**", true],
    ["  `LOOP_COMPLETE`.", true],
    ["LOOP_COMPLETE is near", false],
    ["We are not at LOOP_COMPLETE yet.", false],
    ["loop_complete", false],
    ["LOOP_COMPLETED", false],
  ];
  for (const [reply, expected] of table) assert.equal(hasLoopComplete(reply), expected, reply);
});

Deno.test("tickPrompt tells the model which tick this is and how to end the loop", () => {
  const text = tickPrompt({ prompt: "check CI", tick: 3, interval_ms: 300_000, times: 5 });
  assert.match(text, /^\[Loop tick 3 of 5 — every 5m\]\ncheck CI\n/);
  assert.match(text, /tick 3 of 5 of a recurring loop/);
  assert.match(text, /answer LOOP_COMPLETE on a line of its own/);
  assert.match(
    tickPrompt({ prompt: "x", tick: 1, interval_ms: null, times: null }),
    /^\[Loop tick 1 — self-paced\]/,
  );
});

Deno.test("heartbeatPrompt carries the guard against invented work", () => {
  const text = heartbeatPrompt("check the inbox", 1_800_000);
  assert.match(text, /^\[Heartbeat — every 30m\]\ncheck the inbox\n/);
  assert.match(text, /If nothing needs doing, say so briefly and stop — do not invent work\./);
});

Deno.test("judgeQuestion and parseVerdict: a one-word yes/no/blocked answer", () => {
  const question = judgeQuestion("CI is green", "All 40 checks passed.");
  assert.match(question, /Condition: CI is green/);
  assert.match(question, /All 40 checks passed\./);
  assert.match(question, /yes, no, or blocked/);
  const table: [string, string | null][] = [
    ["Yes.", "yes"],
    ["no", "no"],
    ["BLOCKED - needs credentials", "blocked"],
    ["**yes**", "yes"],
    ["maybe", null],
    ["", null],
    ["I think yes", null],
  ];
  for (const [answer, expected] of table) assert.equal(parseVerdict(answer), expected, answer);
});
