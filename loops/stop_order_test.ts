import assert from "node:assert/strict";
import { decideAfterTick, type TickFacts } from "./stop_order.ts";
import type { Verdict } from "./loop_text.ts";

function facts(
  overrides: Partial<TickFacts>,
  verdicts: (Verdict | Error)[] = [],
): TickFacts & { asked: number } {
  const state = {
    reply: "still red",
    tick: 1,
    ticks_since_resume: 1,
    times: null,
    max_ticks: 100,
    until: null,
    asked: 0,
    judge() {
      state.asked++;
      const next = verdicts.shift() ?? new Error("no scripted verdict");
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    ...overrides,
  };
  return state;
}

Deno.test("stop order: LOOP_COMPLETE wins over every other rule and skips the judge", async () => {
  const f = facts({
    reply: "green\nLOOP_COMPLETE",
    until: "CI is green",
    tick: 5,
    times: 5,
    ticks_since_resume: 100,
  });
  assert.deepEqual(await decideAfterTick(f), { action: "done", reason: "complete" });
  assert.equal(f.asked, 0);
});

Deno.test("stop order: --until yes ends the loop before --times and max_ticks", async () => {
  const f = facts({ until: "CI is green", tick: 3, times: 3, ticks_since_resume: 100 }, ["yes"]);
  assert.deepEqual(await decideAfterTick(f), { action: "done", reason: "until" });
  assert.equal(f.asked, 1);
});

Deno.test("stop order: --until blocked pauses; no keeps going", async () => {
  assert.deepEqual(await decideAfterTick(facts({ until: "c" }, ["blocked"])), {
    action: "pause",
    reason: "blocked",
  });
  assert.deepEqual(await decideAfterTick(facts({ until: "c" }, ["no"])), { action: "continue" });
});

Deno.test("stop order: a judge error keeps looping, and the later rules still apply", async () => {
  assert.deepEqual(await decideAfterTick(facts({ until: "c" }, [new Error("provider down")])), {
    action: "continue",
    judge_error: "provider down",
  });
  const atTimes = facts({ until: "c", tick: 2, times: 2 }, [new Error("provider down")]);
  assert.deepEqual(await decideAfterTick(atTimes), { action: "done", reason: "times" });
});

Deno.test("stop order: --times ends before max_ticks pauses; neither before its count", async () => {
  assert.deepEqual(await decideAfterTick(facts({ tick: 3, times: 3, ticks_since_resume: 3, max_ticks: 3 })), {
    action: "done",
    reason: "times",
  });
  assert.deepEqual(await decideAfterTick(facts({ tick: 2, times: 3, ticks_since_resume: 2, max_ticks: 3 })), {
    action: "continue",
  });
  assert.deepEqual(await decideAfterTick(facts({ tick: 7, ticks_since_resume: 3, max_ticks: 3 })), {
    action: "pause",
    reason: "max_ticks",
  });
  const f = facts({ tick: 7, ticks_since_resume: 2, max_ticks: 3 });
  assert.deepEqual(await decideAfterTick(f), { action: "continue" });
  assert.equal(f.asked, 0, "no judge without --until");
});
