import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { createLogger } from "../core/log.ts";
import { currentProcess } from "../core/process_identity.ts";
import { StallError } from "../core/stall.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import { ownerGuardedStore, OwnerLease, progressBound } from "./owner_lease.ts";

async function fixture(busy: { value: boolean }) {
  const clock = new ManualClock(1_000_000);
  const store = openSqliteStore(":memory:", { clock });
  const me = currentProcess();
  const session = await store.createSession({ job: "j", owner: me });
  const lease = new OwnerLease({
    store,
    sessionId: session.id,
    holder: me,
    clock,
    log: createLogger({ write: () => {} }),
    stallMs: 6_000,
    marginMs: 10_000,
    busy: () => busy.value,
  });
  await lease.start();
  const expiry = async () =>
    // The claim rule reads the expiry; here it is checked through another holder's claim.
    (await store.claimSession(session.id, { ...me, pid: me.pid + 1_000_000, host: "elsewhere" })).claimed;
  const step = async (ms: number) => {
    for (let t = 0; t < ms; t += 500) {
      await clock.advance(500);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  };
  return { clock, store, lease, session, expiry, step, me };
}

Deno.test("owner lease: an idle session is renewed on its own; a turn with progress too", async () => {
  const busy = { value: false };
  const f = await fixture(busy);
  try {
    await f.step(60_000);
    assert.equal(f.lease.lost, false);
    assert.equal(await f.expiry(), false, "an idle owner keeps its session");
    busy.value = true;
    for (let i = 0; i < 20; i++) {
      f.lease.progress();
      await f.step(1_000);
    }
    assert.equal(f.lease.lost, false);
    assert.equal(await f.expiry(), false, "a turn making progress keeps it");
    f.lease.assertOwner();
  } finally {
    await f.lease.stop();
    await f.store.close();
  }
});

Deno.test("owner lease: a turn without progress stops itself; writes are refused; the session becomes claimable", async () => {
  const busy = { value: true };
  const f = await fixture(busy);
  try {
    const guarded = ownerGuardedStore(f.store, f.lease);
    await guarded.appendMessages(f.session.id, [{ role: "user", content: "before" }]);
    await f.step(7_000);
    assert.equal(f.lease.lost, true);
    assert.ok(f.lease.signal.reason instanceof StallError);
    assert.equal(f.lease.signal.reason.reason, "stalled");
    assert.match(f.lease.signal.reason.message, /made no progress for/);
    await assert.rejects(
      guarded.appendMessages(f.session.id, [{ role: "user", content: "after" }]),
      StallError,
    );
    assert.deepEqual((await f.store.activeMessages(f.session.id)).map((m) => m.content), ["before"]);
    // Reads still pass, and the store keeps the owner until its expiry (stall bound + margin) has passed.
    assert.equal((await guarded.getSession(f.session.id))!.id, f.session.id);
    assert.equal(await f.expiry(), false);
    await f.step(10_000);
    assert.equal(await f.expiry(), true);
  } finally {
    await f.lease.stop();
    await f.store.close();
  }
});

Deno.test("owner lease: a session taken over is noticed at the next renewal", async () => {
  const busy = { value: false };
  const f = await fixture(busy);
  try {
    await f.store.updateSession(f.session.id, { owner_host: "other", owner_pid: 1, owner_started: "x" });
    await f.step(5_000);
    assert.equal(f.lease.lost, true);
    assert.match(f.lease.signal.reason.message, /taken over by another process/);
    assert.throws(() => f.lease.assertOwner(), StallError);
  } finally {
    await f.lease.stop();
    await f.store.close();
  }
});

Deno.test("progressBound: the longest single bound of a turn's steps plus every hook bound plus slack", () => {
  assert.equal(progressBound({}, {}), 125_000);
  assert.equal(progressBound({}, { idle_timeout_ms: 1_000 }), 6_000);
  assert.equal(
    progressBound({
      tools: { shell: { timeout: "10m" }, http_fetch: {} },
      plugins: [{ path: "a" }, { path: "b", hook_timeout: "5s" }],
    }, { idle_timeout_ms: 1_000 }),
    600_000 + 35_000 + 5_000,
  );
});
