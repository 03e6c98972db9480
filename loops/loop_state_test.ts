import assert from "node:assert/strict";
import {
  afterTick,
  describeLoop,
  endLoop,
  type LoopState,
  newLoop,
  pauseLoop,
  resumeLoop,
} from "./loop_state.ts";

const pacing = { floor_ms: 60_000, ceiling_ms: 900_000 };
const start = (interval_ms: number | null, extra: Partial<{ times: number; until: string }> = {}) =>
  newLoop({
    kind: "start",
    prompt: "check CI",
    interval_ms,
    interval_text: null,
    times: extra.times ?? null,
    until: extra.until ?? null,
  }, { id: "L1", now: 1_000, source: "job", floor_ms: pacing.floor_ms });

function tick(state: LoopState, endedAt: number, reply = "red", decision = { action: "continue" } as const) {
  return afterTick(state, { decision, digest: reply, reply, ended_at: endedAt, pacing });
}

Deno.test("a new loop is due at once and counts nothing yet", () => {
  const state = start(300_000);
  assert.equal(state.status, "active");
  assert.equal(state.tick, 0);
  assert.equal(state.next_due, 1_000);
});

Deno.test("afterTick counts the tick and schedules INTERVAL after the end of the turn", () => {
  const state = tick(start(300_000), 9_000);
  assert.equal(state.tick, 1);
  assert.equal(state.next_due, 9_000 + 300_000);
  assert.equal(state.last_final, "red");
});

Deno.test("afterTick applies done and pause decisions", () => {
  const done = afterTick(start(1000), {
    decision: { action: "done", reason: "complete" },
    digest: "d",
    reply: "LOOP_COMPLETE",
    ended_at: 2_000,
    pacing,
  });
  assert.equal(done.status, "done");
  assert.equal(done.reason, "complete");
  assert.equal(done.tick, 1);
  const paused = afterTick(start(1000), {
    decision: { action: "pause", reason: "max_ticks" },
    digest: "d",
    reply: "x",
    ended_at: 2_000,
    pacing,
  });
  assert.equal(paused.status, "paused");
  assert.equal(paused.reason, "max_ticks");
});

Deno.test("a pause during the turn is kept; the tick still counts", () => {
  const state = tick(pauseLoop(start(1000), 1_500), 2_000);
  assert.equal(state.status, "paused");
  assert.equal(state.reason, "paused");
  assert.equal(state.tick, 1);
});

Deno.test("self-paced loops double the delay while replies repeat", () => {
  let state = start(null);
  const gaps: number[] = [];
  let now = 1_000;
  for (const reply of ["a", "a", "a", "b"]) {
    state = tick(state, now, reply);
    gaps.push((state.next_due - now) / 1000);
    now = state.next_due;
  }
  assert.deepEqual(gaps, [60, 120, 240, 60]);
});

Deno.test("resume makes the loop due now with a fresh max_ticks budget; only a paused loop resumes", () => {
  const paused = afterTick(tick(start(1000), 2_000), {
    decision: { action: "pause", reason: "max_ticks" },
    digest: "d",
    reply: "x",
    ended_at: 3_000,
    pacing,
  });
  const resumed = resumeLoop(paused, 50_000);
  assert.equal(resumed.status, "active");
  assert.equal(resumed.budget_start, 2);
  assert.equal(resumed.next_due, 50_000);
  assert.equal(resumeLoop(start(1000), 50_000).next_due, 1_000, "an active loop is left alone");
  assert.equal(resumeLoop(endLoop(paused, "stopped", 4_000), 50_000).status, "done");
});

Deno.test("describeLoop reports pace, counts, limits and what comes next", () => {
  const state = tick(start(300_000, { times: 3, until: "CI is green" }), 10_000, "3 checks failing");
  const text = describeLoop(state, 70_000, 100);
  assert.match(text, /^Loop active: every 5m — "check CI"/);
  assert.match(text, /Ticks: 1 \(--times 3, --until CI is green, max_ticks 100\)/);
  assert.match(text, /Next tick: in 4m/);
  assert.match(text, /Last reply: 3 checks failing/);
  assert.match(
    describeLoop(endLoop(state, "stopped", 80_000), 80_000, 100),
    /Reason: stopped by \/loop stop/,
  );
});
