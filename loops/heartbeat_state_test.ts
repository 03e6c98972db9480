import assert from "node:assert/strict";
import {
  afterBeat,
  beatDueAt,
  describeHeartbeat,
  type HeartbeatState,
  isBeatDue,
  newHeartbeat,
  pauseHeartbeat,
  resumeHeartbeat,
} from "./heartbeat_state.ts";

const second = 1000;
const set = (now = 0) =>
  newHeartbeat({ prompt: "check the inbox", interval_ms: second }, { id: "H", now, source: "job" });

Deno.test("the first beat is due one interval after the heartbeat is set, not at once", () => {
  const state = set(5_000);
  assert.equal(beatDueAt(state), 6_000);
  assert.equal(isBeatDue(state, 5_999, false), false);
  assert.equal(isBeatDue(state, 6_000, false), true);
});

Deno.test("real input first: no beat while a turn runs", () => {
  assert.equal(isBeatDue(set(), 10_000, true), false);
});

Deno.test("coalescing: a busy hour yields exactly one beat, and the anchor resets when it fires", () => {
  let state: HeartbeatState = set(0);
  const beatsAt: number[] = [];
  const busyUntil = 3_600_000;
  for (let now = 0; now <= busyUntil + 2_500; now += 100) {
    if (isBeatDue(state, now, now < busyUntil)) {
      beatsAt.push(now);
      state = afterBeat(state, "nothing to do", now);
    }
  }
  assert.deepEqual(beatsAt, [busyUntil, busyUntil + 1_000, busyUntil + 2_000]);
  assert.equal(state.beats, 3);
});

Deno.test("a turn of 3.5 s with a 1 s heartbeat is followed by exactly one beat", () => {
  let state: HeartbeatState = set(0);
  const beatsAt: number[] = [];
  for (let now = 0; now < 4_400; now += 100) {
    if (isBeatDue(state, now, now < 3_500)) {
      beatsAt.push(now);
      state = afterBeat(state, "ok", now);
    }
  }
  assert.deepEqual(beatsAt, [3_500]);
});

Deno.test("resume re-anchors: no stale beat right after a long pause", () => {
  const paused = pauseHeartbeat(set(0));
  assert.equal(isBeatDue(paused, 60_000, false), false, "a paused heartbeat never beats");
  const resumed = resumeHeartbeat(paused, 36_000_000);
  assert.equal(isBeatDue(resumed, 36_000_000, false), false);
  assert.equal(isBeatDue(resumed, 36_001_000, false), true);
  assert.equal(resumeHeartbeat(set(0), 9_000).anchor, 0, "resuming an active heartbeat changes nothing");
});

Deno.test("describeHeartbeat shows the interval, beats and the next beat", () => {
  const state = afterBeat(set(0), "nothing new", 2_000);
  const text = describeHeartbeat(state, 2_400);
  assert.match(text, /^Heartbeat active: every 1s — "check the inbox"/);
  assert.match(text, /Beats: 1/);
  assert.match(text, /Next beat: in 600ms \(when idle\)/);
  assert.match(text, /Last reply: nothing new/);
});
