import assert from "node:assert/strict";
import { currentProcess, type ProcessIdentity, processStartTime } from "../runtime/core/process_identity.ts";
import { Store } from "../runtime/store/store.ts";
import {
  claimSlots,
  finishRun,
  lastRecordedSlot,
  liveClaims,
  recentRuns,
  recordSkipped,
  renewLeases,
  type RunRow,
  takeOver,
} from "./schedule_claims.ts";

const lease = { now: 1_000_000, lease_ms: 60_000 };

async function openStores(): Promise<{ a: Store; b: Store; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-claims-" });
  const a = Store.open(`${dir}/state.db`);
  const b = Store.open(`${dir}/state.db`);
  return {
    a,
    b,
    async [Symbol.asyncDispose]() {
      a.close();
      b.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The identity of a process that has exited: provably dead on this host. */
async function deadProcess(): Promise<ProcessIdentity> {
  const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" }).spawn();
  const started = processStartTime(child.pid)!;
  child.kill("SIGKILL");
  await child.status;
  return { host: Deno.hostname(), pid: child.pid, started, nonce: crypto.randomUUID() };
}

const other = (): ProcessIdentity => ({ ...currentProcess(), nonce: crypto.randomUUID() });
const row = (store: Store, job: string, slot: number) =>
  recentRuns(store, job, 100).find((r) => r.slot === slot)!;

Deno.test("a slot is claimed once across two connections; other slots stay claimable", async () => {
  await using s = await openStores();
  const [me, them] = [other(), other()];
  assert.deepEqual(claimSlots(s.a, [{ job: "j", slot: 1 }], me, lease), [{ outcome: "claimed" }]);
  assert.deepEqual(claimSlots(s.b, [{ job: "j", slot: 1 }], them, lease), [{ outcome: "taken" }]);
  assert.deepEqual(claimSlots(s.b, [{ job: "k", slot: 1 }], them, lease), [{ outcome: "claimed" }]);
  const claimed = row(s.a, "j", 1);
  assert.equal(claimed.status, "running");
  assert.equal(claimed.holder_nonce, me.nonce);
  assert.equal(claimed.lease_expires_at, lease.now + lease.lease_ms);
});

Deno.test("overrun: a slot due while the job's previous run is live is recorded as skipped", async () => {
  await using s = await openStores();
  const me = other();
  claimSlots(s.a, [{ job: "j", slot: 1_000 }], me, lease);
  assert.deepEqual(claimSlots(s.b, [{ job: "j", slot: 2_000 }], other(), lease), [
    { outcome: "overrun", running_slot: 1_000 },
  ]);
  assert.equal(row(s.a, "j", 2_000).status, "skipped");
  assert.match(
    row(s.a, "j", 2_000).note!,
    /^overrun: the run of slot 1970-01-01T00:00:01.000Z is still going$/,
  );
  assert.ok(finishRun(s.a, { job: "j", slot: 1_000 }, me, { status: "success", session_id: "S1", now: 1 }));
  assert.deepEqual(claimSlots(s.b, [{ job: "j", slot: 3_000 }], other(), lease), [{ outcome: "claimed" }]);
});

Deno.test("a dead holder's run is superseded (abandoned) when the job's next slot is claimed", async () => {
  await using s = await openStores();
  const dead = await deadProcess();
  claimSlots(s.a, [{ job: "j", slot: 1_000 }], dead, lease);
  assert.deepEqual(claimSlots(s.b, [{ job: "j", slot: 2_000 }], other(), lease), [{ outcome: "claimed" }]);
  assert.equal(row(s.a, "j", 1_000).status, "abandoned");
  assert.match(row(s.a, "j", 1_000).note!, /died; superseded by a newer slot/);
});

Deno.test("takeOver: a dead holder's slot is taken over exactly once; a live holder's never", async () => {
  await using s = await openStores();
  const dead = await deadProcess();
  const live = other();
  claimSlots(s.a, [{ job: "dead", slot: 1 }, { job: "live", slot: 1 }], dead, lease);
  claimSlots(s.a, [{ job: "live2", slot: 1 }], live, lease);
  const [first, second] = [other(), other()];
  const stale = row(s.a, "dead", 1);
  assert.equal(takeOver(s.a, stale, first, lease), true);
  assert.equal(takeOver(s.b, stale, second, lease), false, "the second claimant sees the new holder");
  const taken = row(s.a, "dead", 1);
  assert.equal(taken.status, "rerunning");
  assert.equal(taken.holder_nonce, first.nonce);
  assert.match(taken.note!, new RegExp(`^taken over from ${Deno.hostname()}:${dead.pid}$`));
  assert.equal(takeOver(s.b, row(s.a, "live2", 1), second, lease), false, "a live holder keeps its slot");
  assert.equal(row(s.a, "live2", 1).status, "running");
  assert.equal(
    finishRun(s.b, { job: "dead", slot: 1 }, dead, { status: "success", session_id: null, now: 2 }),
    false,
    "the old holder can no longer finish it",
  );
  assert.ok(finishRun(s.a, { job: "dead", slot: 1 }, first, { status: "success", session_id: "S", now: 2 }));
  assert.equal(row(s.a, "dead", 1).status, "success");
});

Deno.test("a holder that dies after taking over is not run a third time: the slot is abandoned", async () => {
  await using s = await openStores();
  const [dead1, dead2] = [await deadProcess(), await deadProcess()];
  claimSlots(s.a, [{ job: "j", slot: 1 }], dead1, lease);
  assert.ok(takeOver(s.a, row(s.a, "j", 1), dead2, lease));
  assert.equal(takeOver(s.b, row(s.a, "j", 1), other(), lease), false);
  assert.equal(row(s.a, "j", 1).status, "abandoned");
  assert.deepEqual(liveClaims(s.a), []);
});

Deno.test("an expired lease makes a holder on another host stale; a fresh lease does not", async () => {
  await using s = await openStores();
  const remote: ProcessIdentity = { host: "elsewhere", pid: 1, started: "1", nonce: crypto.randomUUID() };
  claimSlots(s.a, [{ job: "j", slot: 1 }], remote, lease);
  const claimed = row(s.a, "j", 1);
  assert.equal(takeOver(s.b, claimed, other(), lease), false, "lease still valid");
  const later = { now: lease.now + lease.lease_ms + 1, lease_ms: lease.lease_ms };
  assert.equal(takeOver(s.b, claimed, other(), later), true, "lease expired");
});

Deno.test("renewLeases extends only the holder's live claims and lists them", async () => {
  await using s = await openStores();
  const [me, them] = [other(), other()];
  claimSlots(s.a, [{ job: "a", slot: 1 }, { job: "b", slot: 1 }], me, lease);
  claimSlots(s.a, [{ job: "c", slot: 1 }], them, lease);
  finishRun(s.a, { job: "b", slot: 1 }, me, { status: "failed", session_id: null, now: 5, note: "boom" });
  const held = renewLeases(s.a, me, { now: lease.now + 10_000, lease_ms: lease.lease_ms });
  assert.deepEqual([...held], ["a\u00001"]);
  assert.equal(row(s.a, "a", 1).lease_expires_at, lease.now + 70_000);
  assert.equal(row(s.a, "c", 1).lease_expires_at, lease.now + 60_000);
  assert.equal(row(s.a, "b", 1).note, "boom");
});

Deno.test("recordSkipped writes one row per slot and lastRecordedSlot sees every kind of row", async () => {
  await using s = await openStores();
  const me = other();
  assert.equal(lastRecordedSlot(s.a, "j"), null);
  assert.equal(recordSkipped(s.a, { job: "j", slot: 5, note: "missed" }, me, 10), true);
  assert.equal(recordSkipped(s.b, { job: "j", slot: 5, note: "missed" }, other(), 10), false);
  claimSlots(s.a, [{ job: "j", slot: 3 }], me, lease);
  assert.equal(lastRecordedSlot(s.a, "j"), 5);
  const runs: RunRow[] = recentRuns(s.a, "j", 10);
  assert.deepEqual(runs.map((r) => [r.slot, r.status]), [[5, "skipped"], [3, "running"]]);
});
