/**
 * Contract: schedule slot claims. At most one run per (job, slot) across connections; overruns are skipped;
 * stale holders are superseded or taken over once; everything after a claim is qualified by its holder.
 */
import assert from "node:assert/strict";
import type { ProcessIdentity } from "../../../runtime/core/process_identity.ts";
import type { RunFinish, Store } from "../../../runtime/store/store.ts";
import { deadHolder, liveHolder, type OpenStore } from "./_testing.ts";

const lease = { now: 1_000_000, lease_ms: 60_000 };

export function scheduleContract(name: string, open: OpenStore): void {
  const stores = async () => {
    const fx = await open();
    return { fx, a: fx.store, b: await fx.connect() };
  };
  const row = async (store: Store, job: string, slot: number) =>
    (await store.recentRuns(job, 100)).find((r) => r.slot === slot)!;
  const finish = (
    store: Store,
    claim: { job: string; slot: number },
    holder: ProcessIdentity,
    outcome: RunFinish["outcome"],
  ) => store.finishRuns([{ claim, holder, outcome }]).then(([done]) => done!);

  Deno.test(`${name}: a slot is claimed once across two connections; other slots stay claimable`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const [me, them] = [liveHolder(), liveHolder()];
    assert.deepEqual(await a.claimSlots([{ job: "j", slot: 1 }], me, lease), [{ outcome: "claimed" }]);
    assert.deepEqual(await b.claimSlots([{ job: "j", slot: 1 }], them, lease), [{ outcome: "taken" }]);
    assert.deepEqual(await b.claimSlots([{ job: "k", slot: 1 }], them, lease), [{ outcome: "claimed" }]);
    const claimed = await row(a, "j", 1);
    assert.equal(claimed.status, "running");
    assert.equal(claimed.holder_nonce, me.nonce);
    assert.equal(claimed.lease_expires_at, lease.now + lease.lease_ms);
    assert.deepEqual((await a.liveClaims()).map((r) => [r.job, r.slot]).sort(), [["j", 1], ["k", 1]]);
  });

  Deno.test(`${name}: one batch claims each job once; a later slot of a running job overruns`, async () => {
    const { fx, a } = await stores();
    await using _ = fx;
    const me = liveHolder();
    assert.deepEqual(
      await a.claimSlots(
        [{ job: "j", slot: 1 }, { job: "j", slot: 1 }, { job: "j", slot: 2, note: "n" }],
        me,
        lease,
      ),
      [{ outcome: "claimed" }, { outcome: "taken" }, { outcome: "overrun", running_slot: 1 }],
    );
  });

  Deno.test(`${name}: a claim's row is claimed at now and leased from now, stored and for the rest of its batch`, async () => {
    const { fx, a } = await stores();
    await using _ = fx;
    const me = liveHolder();
    // Slot 2 queues behind slot 1 and slot 3 overruns because 2 is queued: both see the rows claimed earlier
    // in the same batch. Slot 20 of job k cancels slot 10, claimed in the same batch.
    assert.deepEqual(
      await a.claimSlots(
        [
          { job: "j", slot: 1 },
          { job: "j", slot: 2, overlap: "queue" },
          { job: "j", slot: 3, overlap: "queue" },
          { job: "k", slot: 10 },
          { job: "k", slot: 20, overlap: "cancel_previous" },
        ],
        me,
        lease,
      ),
      [
        { outcome: "claimed" },
        { outcome: "queued", running_slot: 1 },
        { outcome: "overrun", running_slot: 1 },
        { outcome: "claimed" },
        { outcome: "claimed", cancelled: { slot: 10, holder_nonce: me.nonce } },
      ],
    );
    assert.equal(await a.recordSkipped({ job: "j", slot: 4 }, me, lease.now), true);
    const stamps = async (job: string) =>
      (await a.recentRuns(job, 10)).map((
        r,
      ) => [r.slot, r.status, r.claimed_at, r.lease_expires_at, r.finished_at])
        .sort((x, y) => Number(x[0]) - Number(y[0]));
    const { now, lease_ms } = lease;
    assert.deepEqual(await stamps("j"), [
      [1, "running", now, now + lease_ms, null],
      [2, "queued", now, now + lease_ms, null],
      [3, "skipped", now, null, now],
      [4, "skipped", now, null, now],
    ]);
    assert.deepEqual(await stamps("k"), [
      [10, "cancelled", now, null, now],
      [20, "running", now, now + lease_ms, null],
    ]);
  });

  Deno.test(`${name}: overrun: a slot due while the job's previous run is live is recorded as skipped`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const me = liveHolder();
    await a.claimSlots([{ job: "j", slot: 1_000 }], me, lease);
    assert.deepEqual(await b.claimSlots([{ job: "j", slot: 2_000 }], liveHolder(), lease), [
      { outcome: "overrun", running_slot: 1_000 },
    ]);
    assert.equal((await row(a, "j", 2_000)).status, "skipped");
    assert.match(
      (await row(a, "j", 2_000)).note!,
      /^overrun: the run of slot 1970-01-01T00:00:01.000Z is still going$/,
    );
    assert.ok(
      await finish(a, { job: "j", slot: 1_000 }, me, { status: "success", session_id: "S1", now: 1 }),
    );
    assert.deepEqual(await b.claimSlots([{ job: "j", slot: 3_000 }], liveHolder(), lease), [{
      outcome: "claimed",
    }]);
  });

  Deno.test(`${name}: a dead holder's run is superseded (abandoned) when the job's next slot is claimed`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    await a.claimSlots([{ job: "j", slot: 1_000 }], await deadHolder(), lease);
    assert.deepEqual(await b.claimSlots([{ job: "j", slot: 2_000 }], liveHolder(), lease), [{
      outcome: "claimed",
    }]);
    assert.equal((await row(a, "j", 1_000)).status, "abandoned");
    assert.match((await row(a, "j", 1_000)).note!, /died; superseded by a newer slot/);
  });

  Deno.test(`${name}: takeOverClaim: a dead holder's slot is taken over exactly once; a live holder's never`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const dead = await deadHolder();
    await a.claimSlots([{ job: "dead", slot: 1 }, { job: "live", slot: 1 }], dead, lease);
    await a.claimSlots([{ job: "live2", slot: 1 }], liveHolder(), lease);
    const [first, second] = [liveHolder(), liveHolder()];
    const stale = await row(a, "dead", 1);
    assert.equal(await a.takeOverClaim(stale, first, lease), true);
    assert.equal(
      await b.takeOverClaim(stale, second, lease),
      false,
      "the second claimant sees the new holder",
    );
    const taken = await row(a, "dead", 1);
    assert.equal(taken.status, "rerunning");
    assert.equal(taken.holder_nonce, first.nonce);
    assert.match(taken.note!, new RegExp(`^taken over from ${Deno.hostname()}:${dead.pid}$`));
    assert.equal(
      await b.takeOverClaim(await row(a, "live2", 1), second, lease),
      false,
      "a live holder keeps its slot",
    );
    assert.equal((await row(a, "live2", 1)).status, "running");
    assert.equal(
      await finish(b, { job: "dead", slot: 1 }, dead, { status: "success", session_id: null, now: 2 }),
      false,
      "the old holder can no longer finish it",
    );
    assert.ok(
      await finish(a, { job: "dead", slot: 1 }, first, { status: "success", session_id: "S", now: 2 }),
    );
    assert.equal((await row(a, "dead", 1)).status, "success");
  });

  Deno.test(`${name}: takeOverClaim with on_crash skip: the slot is recorded crashed, never run again; the dead holder's sessions are interrupted`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const dead = await deadHolder();
    const alive = liveHolder({ host: "elsewhere" });
    await a.claimSlots([{ job: "j", slot: 1 }], dead, lease);
    const owned = (holder: ProcessIdentity) => ({
      owner_host: holder.host,
      owner_pid: holder.pid,
      owner_started: holder.started,
    });
    const left = await a.createSession({ job: "j" });
    await a.updateSession(left.id, owned(dead));
    const finished = await a.createSession({ job: "j", status: "success" });
    await a.updateSession(finished.id, owned(dead));
    const other = await a.createSession({ job: "j" });
    await a.updateSession(other.id, owned(alive));
    const skip = { ...lease, on_crash: "skip" as const };
    assert.equal(await b.takeOverClaim(await row(a, "j", 1), liveHolder(), skip), false, "not run again");
    const crashed = await row(a, "j", 1);
    assert.equal(crashed.status, "crashed");
    assert.equal(crashed.finished_at, lease.now);
    assert.match(
      crashed.note!,
      new RegExp(`^holder ${Deno.hostname()}:${dead.pid} died mid-run; not run again`),
    );
    assert.deepEqual(await a.liveClaims(), []);
    assert.equal(
      await a.takeOverClaim(crashed, liveHolder(), lease),
      false,
      "a crashed slot is never taken over",
    );
    const status = async (id: string) => {
      const s = (await a.getSession(id))!;
      return [s.status, s.terminal_reason, s.owner_pid];
    };
    assert.deepEqual(await status(left.id), ["interrupted", "holder_died", null]);
    assert.deepEqual((await status(finished.id))[0], "success", "a finished session keeps its ending");
    assert.deepEqual(
      await status(other.id),
      ["running", null, alive.pid],
      "another owner's session is untouched",
    );
  });

  Deno.test(`${name}: a holder that dies after taking over is not run a third time: the slot is abandoned`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const [dead1, dead2] = [await deadHolder(), await deadHolder()];
    await a.claimSlots([{ job: "j", slot: 1 }], dead1, lease);
    assert.ok(await a.takeOverClaim(await row(a, "j", 1), dead2, lease));
    assert.equal(await b.takeOverClaim(await row(a, "j", 1), liveHolder(), lease), false);
    assert.equal((await row(a, "j", 1)).status, "abandoned");
    assert.deepEqual(await a.liveClaims(), []);
  });

  Deno.test(`${name}: an expired lease makes a holder on another host stale; a fresh lease does not`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const remote: ProcessIdentity = { host: "elsewhere", pid: 1, started: "1", nonce: crypto.randomUUID() };
    await a.claimSlots([{ job: "j", slot: 1 }], remote, lease);
    const claimed = await row(a, "j", 1);
    assert.equal(await b.takeOverClaim(claimed, liveHolder(), lease), false, "lease still valid");
    const later = { now: lease.now + lease.lease_ms + 1, lease_ms: lease.lease_ms };
    assert.equal(await b.takeOverClaim(claimed, liveHolder(), later), true, "lease expired");
  });

  Deno.test(`${name}: renewClaims extends only the holder's live claims and lists them`, async () => {
    const { fx, a } = await stores();
    await using _ = fx;
    const [me, them] = [liveHolder(), liveHolder()];
    await a.claimSlots([{ job: "a", slot: 1 }, { job: "b", slot: 1 }], me, lease);
    await a.claimSlots([{ job: "c", slot: 1 }], them, lease);
    await finish(a, { job: "b", slot: 1 }, me, { status: "failed", session_id: null, now: 5, note: "boom" });
    const held = await a.renewClaims(me, { now: lease.now + 10_000, lease_ms: lease.lease_ms });
    assert.deepEqual(held, [{ job: "a", slot: 1 }]);
    assert.equal((await row(a, "a", 1)).lease_expires_at, lease.now + 70_000);
    assert.equal((await row(a, "c", 1)).lease_expires_at, lease.now + 60_000);
    assert.equal((await row(a, "b", 1)).note, "boom");
  });

  Deno.test(`${name}: a run's end is never recorded before a slot the history skipped because it was going`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const me = liveHolder();
    await a.claimSlots([{ job: "j", slot: 1_000 }], me, lease);
    // The finishing host read its clock (+5) before the other daemon skipped slot 2 000 (+20), and wrote
    // after it: the end is ordered after the skip, so the history never shows a skip once the run was over.
    await b.claimSlots([{ job: "j", slot: 2_000 }], liveHolder(), { ...lease, now: lease.now + 20 });
    assert.ok(
      await finish(a, { job: "j", slot: 1_000 }, me, {
        status: "success",
        session_id: "S",
        now: lease.now + 5,
      }),
    );
    const [ran, skipped] = [await row(a, "j", 1_000), await row(a, "j", 2_000)];
    assert.equal(skipped.status, "skipped");
    assert.equal(ran.finished_at, lease.now + 20);
    // A clock that reads later is kept as it is.
    await a.claimSlots([{ job: "k", slot: 1 }], me, lease);
    assert.ok(
      await finish(a, { job: "k", slot: 1 }, me, { status: "success", session_id: "T", now: lease.now + 50 }),
    );
    assert.equal((await row(a, "k", 1)).finished_at, lease.now + 50);
  });

  Deno.test(`${name}: a crashed run's end is never recorded before a decision the job's history holds`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const remote: ProcessIdentity = { host: "elsewhere", pid: 1, started: "1", nonce: crypto.randomUUID() };
    await a.claimSlots([{ job: "j", slot: 1_000 }], remote, lease);
    const expiry = lease.now + lease.lease_ms;
    // Another daemon, whose clock read later (+50), recorded a slot first; the host that proved the holder
    // dead had read its clock (+5) before it got the job's lock, and wrote after.
    assert.ok(await b.recordSkipped({ job: "j", slot: 2_000 }, liveHolder(), expiry + 50));
    const crash = { now: expiry + 5, lease_ms: lease.lease_ms, on_crash: "skip" as const };
    assert.equal(await a.takeOverClaim(await row(a, "j", 1_000), liveHolder(), crash), false);
    const crashed = await row(a, "j", 1_000);
    assert.deepEqual([crashed.status, crashed.finished_at], ["crashed", expiry + 50]);
    // With no later decision the host's own time stands.
    await a.claimSlots([{ job: "k", slot: 1 }], remote, lease);
    assert.equal(await a.takeOverClaim(await row(a, "k", 1), liveHolder(), crash), false);
    assert.equal((await row(a, "k", 1)).finished_at, expiry + 5);
  });

  Deno.test(`${name}: finishRuns records several runs at once, each qualified by its holder`, async () => {
    const { fx, a } = await stores();
    await using _ = fx;
    const end = lease.now + 9;
    const [me, them] = [liveHolder(), liveHolder()];
    await a.claimSlots([{ job: "a", slot: 1 }, { job: "b", slot: 1 }], me, lease);
    const done = await a.finishRuns([
      { claim: { job: "a", slot: 1 }, holder: me, outcome: { status: "success", session_id: "S", now: end } },
      {
        claim: { job: "b", slot: 1 },
        holder: them,
        outcome: { status: "failed", session_id: null, now: end },
      },
      { claim: { job: "z", slot: 1 }, holder: me, outcome: { status: "failed", session_id: null, now: end } },
    ]);
    assert.deepEqual(done, [true, false, false]);
    const finished = await row(a, "a", 1);
    assert.deepEqual(
      [finished.status, finished.session_id, finished.finished_at, finished.lease_expires_at],
      ["success", "S", end, null],
    );
    assert.equal((await row(a, "b", 1)).status, "running");
    assert.deepEqual(await a.finishRuns([]), []);
  });

  Deno.test(`${name}: recordSkipped writes one row per slot and lastRecordedSlot sees every kind of row`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const me = liveHolder();
    assert.equal(await a.lastRecordedSlot("j"), null);
    assert.equal(await a.recordSkipped({ job: "j", slot: 5, note: "missed" }, me, 10), true);
    assert.equal(await b.recordSkipped({ job: "j", slot: 5, note: "missed" }, liveHolder(), 10), false);
    await a.claimSlots([{ job: "j", slot: 3 }], me, lease);
    assert.equal(await a.lastRecordedSlot("j"), 5);
    const runs = await a.recentRuns("j", 10);
    assert.deepEqual(runs.map((r) => [r.slot, r.status]), [[5, "skipped"], [3, "running"]]);
    assert.deepEqual(runs[0], {
      job: "j",
      slot: 5,
      status: "skipped",
      holder_host: me.host,
      holder_pid: me.pid,
      holder_started: me.started,
      holder_nonce: me.nonce,
      claimed_at: 10,
      lease_expires_at: null,
      finished_at: 10,
      session_id: null,
      note: "missed",
    });
    assert.equal((await a.recentRuns("j", 1)).length, 1);
  });

  Deno.test(`${name}: a deleted session's schedule run keeps its slot and loses the session`, async () => {
    const { fx, a } = await stores();
    await using _ = fx;
    const me = liveHolder();
    const s = await a.createSession({ job: "j" });
    await a.claimSlots([{ job: "j", slot: 1 }], me, lease);
    await finish(a, { job: "j", slot: 1 }, me, { status: "success", session_id: s.id, now: 2 });
    await a.deleteSessions([s.id]);
    const kept = await row(a, "j", 1);
    assert.deepEqual([kept.status, kept.session_id], ["success", null]);
  });

  Deno.test(`${name}: overlap queue: one slot waits as queued across connections, starts once the run ends`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const [me, them] = [liveHolder(), liveHolder()];
    await a.claimSlots([{ job: "j", slot: 1_000, overlap: "queue" }], me, lease);
    assert.deepEqual(await b.claimSlots([{ job: "j", slot: 2_000, overlap: "queue" }], them, lease), [
      { outcome: "queued", running_slot: 1_000 },
    ]);
    const queued = await row(a, "j", 2_000);
    assert.equal(queued.status, "queued");
    assert.equal(queued.holder_nonce, them.nonce);
    assert.match(queued.note!, /^queued: the run of slot 1970-01-01T00:00:01.000Z is still going/);
    // Not a backlog: a third slot due while one waits is skipped, naming the one that waits.
    assert.deepEqual(await a.claimSlots([{ job: "j", slot: 3_000, overlap: "queue" }], me, lease), [
      { outcome: "overrun", running_slot: 1_000 },
    ]);
    assert.equal((await row(a, "j", 3_000)).status, "skipped");
    assert.match((await row(a, "j", 3_000)).note!, /slot 1970-01-01T00:00:02.000Z is already queued/);
    // While the run goes on, the queued slot waits (only its holder may start it).
    const waitLease = { now: lease.now + 10_000, lease_ms: lease.lease_ms };
    assert.deepEqual(await b.startQueued([{ job: "j", slot: 2_000 }], them, waitLease), {
      started: [],
      waiting: [{ job: "j", slot: 2_000 }],
    });
    assert.equal((await row(a, "j", 2_000)).lease_expires_at, waitLease.now + lease.lease_ms);
    assert.deepEqual(await a.startQueued([{ job: "j", slot: 2_000 }], me, lease), {
      started: [],
      waiting: [],
    });
    assert.ok(
      await finish(a, { job: "j", slot: 1_000 }, me, { status: "success", session_id: null, now: 5 }),
    );
    assert.deepEqual(await b.startQueued([{ job: "j", slot: 2_000 }], them, lease), {
      started: [{ job: "j", slot: 2_000 }],
      waiting: [],
    });
    const started = await row(a, "j", 2_000);
    assert.equal(started.status, "running");
    assert.deepEqual((await a.liveClaims()).map((r) => r.slot), [2_000]);
    assert.ok(
      await finish(b, { job: "j", slot: 2_000 }, them, { status: "success", session_id: null, now: 6 }),
    );
  });

  Deno.test(`${name}: overlap queue: a queued slot whose holder died is superseded by the next claim`, async () => {
    const { fx, a } = await stores();
    await using _ = fx;
    const me = liveHolder();
    await a.claimSlots([{ job: "j", slot: 1_000, overlap: "queue" }], me, lease);
    await a.claimSlots([{ job: "j", slot: 2_000, overlap: "queue" }], await deadHolder(), lease);
    assert.equal((await row(a, "j", 2_000)).status, "queued");
    assert.deepEqual(await a.claimSlots([{ job: "j", slot: 3_000, overlap: "queue" }], me, lease), [
      { outcome: "queued", running_slot: 1_000 },
    ]);
    assert.equal((await row(a, "j", 2_000)).status, "abandoned");
  });

  Deno.test(`${name}: overlap cancel_previous: the live run is recorded cancelled, its holder loses the claim`, async () => {
    const { fx, a, b } = await stores();
    await using _ = fx;
    const [me, them] = [liveHolder(), liveHolder()];
    await a.claimSlots([{ job: "j", slot: 1_000, overlap: "cancel_previous" }], me, lease);
    assert.deepEqual(
      await b.claimSlots([{ job: "j", slot: 2_000, overlap: "cancel_previous" }], them, lease),
      [
        { outcome: "claimed", cancelled: { slot: 1_000, holder_nonce: me.nonce } },
      ],
    );
    const cancelled = await row(a, "j", 1_000);
    assert.equal(cancelled.status, "cancelled");
    assert.match(cancelled.note!, /^cancelled: slot 1970-01-01T00:00:02.000Z came due while it ran/);
    assert.deepEqual(await a.renewClaims(me, lease), [], "the cancelled run's holder no longer holds it");
    assert.equal(
      await finish(a, { job: "j", slot: 1_000 }, me, { status: "interrupted", session_id: null, now: 3 }),
      false,
      "its late ending does not overwrite the decision",
    );
    assert.equal((await row(a, "j", 1_000)).status, "cancelled");
    assert.equal((await row(a, "j", 2_000)).status, "running");
    // The default still skips.
    assert.deepEqual(await a.claimSlots([{ job: "j", slot: 3_000 }], me, lease), [
      { outcome: "overrun", running_slot: 2_000 },
    ]);
  });
}
