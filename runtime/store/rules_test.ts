import assert from "node:assert/strict";
import { busyReasons, claimable, slotDecision } from "./rules.ts";
import type { RunRow } from "./store.ts";

const HOST = "this-host";
const row = (slot: number, holder: Partial<RunRow> = {}): RunRow => ({
  job: "j",
  slot,
  status: "running",
  holder_host: "other-host",
  holder_pid: 42,
  holder_started: "1",
  holder_nonce: "n",
  claimed_at: 0,
  lease_expires_at: 10_000,
  finished_at: null,
  session_id: null,
  note: null,
  ...holder,
});

Deno.test("slotDecision: a slot already live is taken; a live run of the job makes the next an overrun", () => {
  assert.deepEqual(slotDecision([row(1_000)], 1_000, { now: 5_000, host: HOST }), { action: "taken" });
  assert.deepEqual(slotDecision([row(1_000)], 2_000, { now: 5_000, host: HOST }), {
    action: "overrun",
    running_slot: 1_000,
    note: "overrun: the run of slot 1970-01-01T00:00:01.000Z is still going",
  });
});

Deno.test("slotDecision: with no live run the slot is claimed; a stale claim is abandoned as superseded", () => {
  assert.deepEqual(slotDecision([], 2_000, { now: 5_000, host: HOST }), { action: "claim", abandon: [] });
  // Lease expired: stale whatever the host (another host's holder is never provably dead before that).
  const expired = row(1_000, { lease_expires_at: 4_000 });
  assert.deepEqual(slotDecision([expired], 2_000, { now: 5_000, host: HOST }), {
    action: "claim",
    abandon: [{ row: expired, note: "holder other-host:42 died; superseded by a newer slot" }],
  });
});

Deno.test("slotDecision: overlap queue queues one slot; another due while it waits is skipped", () => {
  const at = { now: 5_000, host: HOST };
  assert.deepEqual(slotDecision([row(1_000)], 2_000, at, { overlap: "queue" }), {
    action: "queue",
    running_slot: 1_000,
    note: "queued: the run of slot 1970-01-01T00:00:01.000Z is still going (schedule.overlap: queue)",
    abandon: [],
  });
  const waiting = row(2_000, { status: "queued" });
  assert.deepEqual(slotDecision([row(1_000)], 2_000, at, { overlap: "queue", queued: [waiting] }), {
    action: "taken",
  });
  assert.deepEqual(slotDecision([row(1_000)], 3_000, at, { overlap: "queue", queued: [waiting] }), {
    action: "overrun",
    running_slot: 1_000,
    note: "overrun: slot 1970-01-01T00:00:02.000Z is already queued (schedule.overlap: queue)",
  });
  // Nothing running: the slot is simply claimed.
  assert.deepEqual(slotDecision([], 3_000, at, { overlap: "queue" }), { action: "claim", abandon: [] });
});

Deno.test("slotDecision: overlap cancel_previous claims the slot and cancels the live run", () => {
  const live = row(1_000);
  assert.deepEqual(slotDecision([live], 2_000, { now: 5_000, host: HOST }, { overlap: "cancel_previous" }), {
    action: "claim",
    abandon: [],
    cancel: {
      row: live,
      note:
        "cancelled: slot 1970-01-01T00:00:02.000Z came due while it ran (schedule.overlap: cancel_previous)",
    },
  });
  // A stale run is superseded as before, not cancelled.
  const expired = row(1_000, { lease_expires_at: 4_000 });
  const decision = slotDecision([expired], 2_000, { now: 5_000, host: HOST }, { overlap: "cancel_previous" });
  assert.equal(decision.action === "claim" && decision.cancel, undefined);
});

Deno.test("busyReasons: a live owner and a live lease holder are named; a provably dead one is not", async () => {
  const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" }).spawn();
  const dead = { host: HOST, pid: child.pid, started: "dead-start", nonce: "d" };
  child.kill("SIGKILL");
  await child.status;
  const elsewhere = { host: "other-host", pid: 7, started: "1", nonce: "o" };
  const reasons = busyReasons(["a", "b", "c"], {
    owners: [{ id: "a", holder: elsewhere }, { id: "c", holder: dead }],
    leases: [{ session_id: "a", holder: elsewhere, expires_at: 0 }],
  }, HOST);
  assert.deepEqual(reasons, [{
    id: "a",
    reason:
      "running in pid 7 on other-host; compacting in pid 7 on other-host, lease until 1970-01-01T00:00:00.000Z",
  }]);
});

Deno.test("claimable: the owner alone decides — nobody, the holder itself, or a provably dead owner", () => {
  const holder = { host: HOST, pid: 7, started: "70" };
  const elsewhere = { host: "other-host", pid: 8, started: "80" };
  assert.equal(claimable(null, { holder, host: HOST }), true, "nobody owns it");
  assert.equal(claimable({ ...holder }, { holder, host: HOST }), true, "the holder claims again");
  assert.equal(claimable(elsewhere, { holder, host: HOST }), false, "a live owner elsewhere is never dead");
  // Deno.pid with another start time is a process that no longer exists here.
  const gone = { host: HOST, pid: Deno.pid, started: "not-this-start" };
  assert.equal(claimable(gone, { holder, host: HOST }), true, "a provably dead owner left it");
});
