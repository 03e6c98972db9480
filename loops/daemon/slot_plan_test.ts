import assert from "node:assert/strict";
import { catchUpPlan, dueSlot } from "./slot_plan.ts";

const minute = 60_000;

Deno.test("catchUpPlan: one missed slot runs (catch_up: one) or is recorded as skipped (none)", () => {
  const missed = { latest: 10 * minute, last_recorded: 0, now: 10 * minute + 30_000 };
  assert.deepEqual(catchUpPlan({ ...missed, catch_up: "one" }), { action: "run", slot: 10 * minute });
  assert.deepEqual(catchUpPlan({ ...missed, catch_up: "none" }), { action: "skip", slot: 10 * minute });
});

Deno.test("catchUpPlan: nothing to catch up without history, without a missed slot, or without slots", () => {
  const now = 10 * minute + 30_000;
  assert.deepEqual(catchUpPlan({ latest: 10 * minute, last_recorded: null, now, catch_up: "one" }), {
    action: "none",
  });
  assert.deepEqual(catchUpPlan({ latest: 10 * minute, last_recorded: 10 * minute, now, catch_up: "one" }), {
    action: "none",
  });
  assert.deepEqual(catchUpPlan({ latest: null, last_recorded: 0, now, catch_up: "one" }), { action: "none" });
});

Deno.test("catchUpPlan: a slot exactly at start-up is due, not caught up (so catch_up: none does not skip it)", () => {
  assert.deepEqual(catchUpPlan({ latest: minute, last_recorded: 0, now: minute, catch_up: "none" }), {
    action: "due",
    slot: minute,
  });
});

Deno.test("dueSlot: on time it is the next slot; after a long gap only the latest missed slot", () => {
  let asked = 0;
  const latest = (t: number) => (asked++, Math.floor(t / 1000) * 1000);
  assert.equal(dueSlot(5_000, 5_999, latest), 5_000);
  assert.equal(asked, 0, "no cron walk when on time");
  assert.equal(dueSlot(5_000, 65_400, latest), 65_000);
  assert.equal(dueSlot(5_000, 65_400, () => null), 5_000);
});
