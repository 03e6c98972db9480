/**
 * Contract: the run queue. Each run is claimed by one worker whatever number race; a key submits once;
 * group limits and `max_running` hold across connections; cancels reach queued and running runs; a dead
 * worker's run follows on_crash; everything after a claim is qualified by the worker's nonce.
 */
import assert from "node:assert/strict";
import type { NewQueuedRun, QueuedRun, Store } from "../../../runtime/store/store.ts";
import { deadHolder, liveHolder, type OpenStore } from "./_testing.ts";

const NOW = 1_000_000;
const lease = { now: NOW, lease_ms: 60_000 };

function newRun(overrides: Partial<NewQueuedRun> = {}): NewQueuedRun {
  return {
    job: "j",
    job_path: "/jobs/j.yaml",
    job_snapshot: '{"name":"j"}',
    inputs: {},
    now: NOW,
    ...overrides,
  };
}

/** Claims until the queue yields nothing more, one run at a time per call. */
async function drain(
  store: Store,
  options: { max?: number; max_running?: number } = {},
): Promise<QueuedRun[]> {
  const holder = liveHolder();
  const claimed: QueuedRun[] = [];
  for (;;) {
    const got = await store.claimRuns({
      holder,
      ...lease,
      max: options.max ?? 2,
      max_running: options.max_running,
    });
    if (got.length === 0) return claimed;
    claimed.push(...got);
  }
}

export function runQueueContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: queue: a submitted run is queued with its snapshot; a key submits once`, async () => {
    await using fx = await open();
    const { store } = fx;
    const first = await store.submitRun(
      newRun({ key: "k1", inputs: { repo: "a/b" }, priority: 3, labels: { team: "x" } }),
    );
    assert.equal(first.deduplicated, false);
    assert.equal(first.run.status, "queued");
    assert.deepEqual(first.run.inputs, { repo: "a/b" });
    assert.deepEqual(first.run.labels, { team: "x" });
    assert.equal(first.run.priority, 3);
    assert.equal(first.run.attempts, 0);
    const again = await (await fx.connect()).submitRun(newRun({ key: "k1", inputs: { repo: "c/d" } }));
    assert.equal(again.deduplicated, true);
    assert.equal(again.run.id, first.run.id);
    assert.deepEqual(again.run.inputs, { repo: "a/b" });
    const other = await store.submitRun(newRun({ key: "k2" }));
    assert.notEqual(other.run.id, first.run.id);
    assert.equal((await store.listRuns()).length, 2);
    assert.equal(await store.resolveRunId(first.run.id.slice(0, -3)), first.run.id);
    await assert.rejects(store.resolveRunId("nope"), /Cannot find run "nope"/);
  });

  Deno.test(`${name}: queue: runs list newest first, filtered by labels and time, paged by keyset`, async () => {
    await using fx = await open();
    const { store } = fx;
    // Two runs share each submission time, so the keyset's id breaks ties.
    for (let i = 0; i < 10; i++) {
      await store.submitRun(newRun({
        now: NOW + Math.floor(i / 2) * 1000,
        labels: { team: i % 2 === 0 ? "a" : "b", 'odd key"': "v" },
      }));
    }
    const all = await store.listRuns();
    assert.equal(all.length, 10);
    const pages: string[] = [];
    let before: { submitted_at: number; id: string } | undefined;
    for (;;) {
      const page = await store.listRuns({ limit: 3, ...(before ? { before } : {}) });
      if (page.length === 0) break;
      pages.push(...page.map((r) => r.id));
      const last = page.at(-1)!;
      before = { submitted_at: last.submitted_at, id: last.id };
    }
    assert.deepEqual(pages, all.map((r) => r.id), "the pages together are the list, once each, in order");
    const team = await store.listRuns({ labels: { team: "a" } });
    assert.equal(team.length, 5);
    assert.ok(team.every((r) => r.labels.team === "a"));
    assert.equal((await store.listRuns({ labels: { team: "a", 'odd key"': "v" } })).length, 5);
    assert.equal((await store.listRuns({ labels: { team: "c" } })).length, 0);
    const window = await store.listRuns({ since: NOW + 1000, until: NOW + 3000 });
    assert.deepEqual(window.map((r) => r.submitted_at), [NOW + 2000, NOW + 2000, NOW + 1000, NOW + 1000]);
  });

  Deno.test(`${name}: queue: 4 connections racing claims: each run has exactly one winner`, async () => {
    await using fx = await open();
    const stores = [fx.store, await fx.connect(), await fx.connect(), await fx.connect()];
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) ids.add((await fx.store.submitRun(newRun({ now: NOW + i }))).run.id);
    const won = await Promise.all(stores.map((s) => drain(s)));
    const all = won.flat().map((r) => r.id);
    assert.equal(all.length, 40, "every run claimed");
    assert.deepEqual(new Set(all), ids, "no run claimed twice");
    for (const run of won.flat()) {
      assert.equal(run.status, "running");
      assert.equal(run.attempts, 1);
    }
    assert.equal((await fx.store.listRuns({ status: "running" })).length, 40);
  });

  Deno.test(`${name}: queue: priority first, then oldest; not_before holds a run back`, async () => {
    await using fx = await open();
    const { store } = fx;
    const old = (await store.submitRun(newRun({ now: NOW - 10 }))).run.id;
    const urgent = (await store.submitRun(newRun({ now: NOW, priority: 5 }))).run.id;
    const later = (await store.submitRun(newRun({ now: NOW - 20, not_before: NOW + 1_000 }))).run.id;
    const holder = liveHolder();
    const got = await store.claimRuns({ holder, ...lease, max: 5 });
    assert.deepEqual(got.map((r) => r.id), [urgent, old]);
    const due = await store.claimRuns({ holder, now: NOW + 1_000, lease_ms: 60_000, max: 5 });
    assert.deepEqual(due.map((r) => r.id), [later]);
  });

  Deno.test(`${name}: queue: a group limit and max_running hold across 3 workers`, async () => {
    await using fx = await open();
    const stores = [fx.store, await fx.connect(), await fx.connect()];
    for (let i = 0; i < 9; i++) {
      await fx.store.submitRun(newRun({ now: NOW + i, group: "repo-a", group_limit: 2 }));
    }
    for (let i = 0; i < 3; i++) await fx.store.submitRun(newRun({ now: NOW + 10 + i }));
    const holders = stores.map(() => liveHolder());
    const rounds = await Promise.all(
      stores.map((s, i) => s.claimRuns({ holder: holders[i]!, ...lease, max: 5 })),
    );
    const claimed = rounds.flat();
    assert.equal(claimed.filter((r) => r.group === "repo-a").length, 2, "the group's limit");
    assert.equal(await fx.store.groupRunning("repo-a"), 2);
    assert.equal(claimed.filter((r) => r.group === null).length, 3, "runs outside the group are not held");
    // One of the group ends: exactly one more of it may start.
    const ended = claimed.find((r) => r.group === "repo-a")!;
    const owner = holders[rounds.findIndex((round) => round.some((r) => r.id === ended.id))]!;
    assert.equal(
      await fx.store.finishRun({
        id: ended.id,
        holder: owner,
        status: "success",
        session_id: null,
        result: { ok: 1 },
        exit_code: 0,
        now: NOW,
      }),
      true,
    );
    const next = await Promise.all(
      stores.map((s, i) => s.claimRuns({ holder: holders[i]!, ...lease, max: 5 })),
    );
    assert.equal(next.flat().length, 1);
    // max_running counts every running run in the store: 2 of the group + 3 others now.
    await fx.store.submitRun(newRun({ now: NOW + 50 }));
    assert.deepEqual(await fx.store.claimRuns({ holder: holders[0]!, ...lease, max: 5, max_running: 5 }), []);
    assert.equal(
      (await fx.store.claimRuns({ holder: holders[0]!, ...lease, max: 5, max_running: 6 })).length,
      1,
    );
  });

  Deno.test(`${name}: queue: cancel: a queued run at once, a running one asked to stop; an ended one unchanged`, async () => {
    await using fx = await open();
    const { store } = fx;
    const queued = (await store.submitRun(newRun())).run.id;
    const cancelled = await store.cancelRun(queued, NOW + 1);
    assert.equal(cancelled.status, "cancelled");
    assert.equal(cancelled.finished_at, NOW + 1);
    assert.deepEqual(await store.claimRuns({ holder: liveHolder(), ...lease, max: 5 }), [], "never claimed");
    const running = (await store.submitRun(newRun())).run.id;
    const holder = liveHolder();
    await store.claimRuns({ holder, ...lease, max: 5 });
    assert.deepEqual(await store.cancelRequests(holder), []);
    const asked = await (await fx.connect()).cancelRun(running, NOW + 2);
    assert.equal(asked.status, "running");
    assert.equal(asked.cancel_requested, true);
    assert.deepEqual(await store.cancelRequests(holder), [running]);
    assert.deepEqual(await store.renewRuns(holder, lease), { held: [running], cancel: [running] });
    assert.equal(
      await store.finishRun({
        id: running,
        holder,
        status: "cancelled",
        session_id: "s",
        result: null,
        exit_code: 130,
        now: NOW + 3,
      }),
      true,
    );
    const ended = await store.cancelRun(running, NOW + 4);
    assert.equal(ended.status, "cancelled");
    assert.equal(ended.finished_at, NOW + 3);
    await assert.rejects(store.cancelRun("r-none", NOW), /no such run/);
  });

  Deno.test(`${name}: queue: a run pinned to a worker is claimed by it alone, until it is pinned to another`, async () => {
    await using fx = await open();
    const { store } = fx;
    const [mine, other] = [liveHolder(), liveHolder()];
    const pinned = (await store.submitRun(newRun({ key: "slot-1", pinned_to: mine.nonce }))).run;
    assert.equal(pinned.pinned_to, mine.nonce);
    const free = (await store.submitRun(newRun())).run;
    assert.deepEqual((await store.listRuns({ key: "slot-1" })).map((r) => r.id), [pinned.id]);
    // Another worker takes the unpinned run only; the pinned-only claim of the owner takes its own.
    assert.deepEqual((await store.claimRuns({ holder: other, ...lease, max: 5 })).map((r) => r.id), [
      free.id,
    ]);
    assert.deepEqual(await store.claimRuns({ holder: mine, ...lease, max: 5, pinned: "none" }), []);
    assert.equal(await store.pinRun(pinned.id, other.nonce), true, "re-pinned while queued");
    assert.deepEqual(await store.claimRuns({ holder: mine, ...lease, max: 5, pinned: "only" }), []);
    const taken = await (await fx.connect()).claimRuns({ holder: other, ...lease, max: 5, pinned: "only" });
    assert.deepEqual(taken.map((r) => r.id), [pinned.id]);
    assert.equal(await store.pinRun(pinned.id, mine.nonce), false, "a running run is not re-pinned");
  });

  Deno.test(`${name}: queue: runs cancelled while queued are handed once for notification; running ones not`, async () => {
    await using fx = await open();
    const { store } = fx;
    const running = (await store.submitRun(newRun())).run.id;
    assert.equal((await store.getRun(running))!.trigger, "cli");
    await store.claimRuns({ holder: liveHolder(), ...lease, max: 5 });
    const queued = (await store.submitRun(newRun({ trigger: "schedule" }))).run;
    assert.equal(queued.trigger, "schedule");
    assert.deepEqual(await store.takeUnnotifiedRuns(), []);
    // A running run's cancel is recorded by its worker, which notifies then: not owed here.
    await store.cancelRun(running, NOW + 1);
    const grouped =
      (await store.submitRun(newRun({ group: "g", group_limit: 1, not_before: NOW * 10 }))).run.id;
    await store.cancelRun(queued.id, NOW + 1);
    await store.submitRun(
      newRun({ group: "g", group_limit: 1, cancel_in_progress: true, not_before: NOW * 10 }),
    );
    const other = await fx.connect();
    const [a, b] = await Promise.all([store.takeUnnotifiedRuns(), other.takeUnnotifiedRuns()]);
    const taken = [...a, ...b].map((r) => r.id).sort();
    assert.deepEqual(taken, [queued.id, grouped].sort(), "each owed run handed once");
    assert.ok([...a, ...b].every((r) => r.status === "cancelled"));
    assert.deepEqual(await store.takeUnnotifiedRuns(), []);
  });

  Deno.test(`${name}: queue: cancel_in_progress cancels the group's other runs when a new one is submitted`, async () => {
    await using fx = await open();
    const { store } = fx;
    const group = { group: "deploy", group_limit: 1, cancel_in_progress: true };
    const first = (await store.submitRun(newRun(group))).run.id;
    const holder = liveHolder();
    await store.claimRuns({ holder, ...lease, max: 5 });
    const second = (await store.submitRun(newRun({ ...group, now: NOW + 1 }))).run.id;
    const third = (await store.submitRun(newRun({ ...group, now: NOW + 2 }))).run.id;
    assert.equal((await store.getRun(first))!.cancel_requested, true);
    assert.equal((await store.getRun(second))!.status, "cancelled");
    assert.equal((await store.getRun(third))!.status, "queued");
    // Outside the group nothing changes.
    const other =
      (await store.submitRun(newRun({ group: "other", group_limit: 1, cancel_in_progress: true }))).run.id;
    assert.equal((await store.getRun(third))!.status, "queued");
    assert.equal((await store.getRun(other))!.status, "queued");
  });

  Deno.test(`${name}: queue: a dead worker's run is crashed (on_crash: skip), or taken over once (rerun)`, async () => {
    const dead = await deadHolder();
    await using fx = await open();
    const { store } = fx;
    const skip = (await store.submitRun(newRun())).run.id;
    const rerun = (await store.submitRun(newRun({ on_crash: "rerun", now: NOW + 1 }))).run.id;
    const alive = (await store.submitRun(newRun({ now: NOW + 2 }))).run.id;
    await store.claimRuns({ holder: dead, ...lease, max: 2 });
    const worker = liveHolder();
    await store.claimRuns({ holder: worker, ...lease, max: 1 });
    const session = await store.createSession({ job: "j" });
    assert.equal(await store.setRunSession(skip, dead, session.id), true);
    const handled = await (await fx.connect()).recoverRuns({ now: NOW + 10 });
    assert.deepEqual(
      handled.map((r) => [r.id, r.status]).sort(),
      [[rerun, "queued"], [skip, "crashed"]].sort(),
    );
    assert.equal((await store.getSession(session.id))!.status, "interrupted");
    assert.equal((await store.getRun(alive))!.status, "running", "a live worker's run is left alone");
    // The dead worker's late end is refused; the rerun is claimed again, attempt 2.
    assert.equal(
      await store.finishRun({
        id: skip,
        holder: dead,
        status: "success",
        session_id: null,
        result: null,
        exit_code: 0,
        now: NOW,
      }),
      false,
    );
    const again = await store.claimRuns({ holder: dead, ...lease, max: 5 });
    assert.deepEqual(again.map((r) => [r.id, r.attempts]), [[rerun, 2]]);
    // Dead again: it is not run a third time.
    const last = await store.recoverRuns({ now: NOW + 20 });
    assert.deepEqual(last.map((r) => [r.id, r.status]), [[rerun, "crashed"]]);
    // A silent worker (lease expired), wherever it runs, is treated the same.
    const silent = (await store.submitRun(newRun({ now: NOW + 3 }))).run.id;
    await store.claimRuns({ holder: liveHolder({ host: "elsewhere" }), ...lease, max: 5 });
    assert.deepEqual(await store.recoverRuns({ now: NOW + 30 }), []);
    const expired = await store.recoverRuns({ now: NOW + 60_001 });
    assert.deepEqual(
      expired.map((r) => [r.id, r.status]).sort(),
      [[alive, "crashed"], [silent, "crashed"]].sort(),
    );
  });

  Deno.test(`${name}: queue: a model hold keeps its queued runs back until it passes`, async () => {
    await using fx = await open();
    const { store } = fx;
    const held = (await store.submitRun(newRun({ model: "gpt-x" }))).run.id;
    const free = (await store.submitRun(newRun({ model: "other", now: NOW + 1 }))).run.id;
    await store.holdModel("gpt-x", NOW + 5_000);
    await store.holdModel("gpt-x", NOW + 1_000); // an earlier end does not shorten it
    assert.deepEqual(await store.modelHolds(NOW), { "gpt-x": NOW + 5_000 });
    const holder = liveHolder();
    assert.deepEqual((await store.claimRuns({ holder, ...lease, max: 5 })).map((r) => r.id), [free]);
    const later = await store.claimRuns({ holder, now: NOW + 5_000, lease_ms: 1, max: 5 });
    assert.deepEqual(later.map((r) => r.id), [held]);
  });

  Deno.test(`${name}: queue: a run's events are stored in order and read after a seq`, async () => {
    await using fx = await open();
    const { store } = fx;
    const id = (await store.submitRun(newRun())).run.id;
    await store.appendRunEvents(id, [{ type: "a" }, { type: "b" }]);
    await (await fx.connect()).appendRunEvents(id, [{ type: "c" }]);
    assert.deepEqual((await store.runEvents(id, 0)).map((e) => [e.seq, e.event]), [
      [1, { type: "a" }],
      [2, { type: "b" }],
      [3, { type: "c" }],
    ]);
    assert.deepEqual((await store.runEvents(id, 2)).map((e) => e.seq), [3]);
  });

  Deno.test(`${name}: queue: a run's last events are stored with its end, after those stored before`, async () => {
    await using fx = await open();
    const { store } = fx;
    const id = (await store.submitRun(newRun())).run.id;
    const holder = liveHolder();
    await store.claimRuns({ holder, ...lease, max: 1 });
    await store.appendRunEvents(id, [{ type: "a" }]);
    const end = {
      id,
      holder,
      status: "success" as const,
      session_id: null,
      result: null,
      exit_code: 0,
      now: NOW,
    };
    assert.equal(await store.finishRun({ ...end, events: [{ type: "b" }, { type: "c" }] }), true);
    assert.equal((await store.getRun(id))?.status, "success");
    // A worker that lost its claim still stores what its run did; the end is not recorded.
    assert.equal(await store.finishRun({ ...end, events: [{ type: "d" }] }), false);
    assert.deepEqual((await store.runEvents(id, 0)).map((e) => [e.seq, e.event]), [
      [1, { type: "a" }],
      [2, { type: "b" }],
      [3, { type: "c" }],
      [4, { type: "d" }],
    ]);
  });

  Deno.test(`${name}: queue: a delivery is recorded by id and updated in place`, async () => {
    await using fx = await open();
    const { store } = fx;
    const id = (await store.submitRun(newRun())).run.id;
    const delivery = {
      id: "d-1",
      run_id: id,
      target: "https://hooks.example.com/h",
      event: "run.success",
      status: "pending" as const,
      attempts: 1,
      response_status: 503,
      error: "HTTP 503",
      created_at: NOW,
      updated_at: NOW,
    };
    await store.recordDelivery(delivery);
    await (await fx.connect()).recordDelivery({
      ...delivery,
      status: "delivered",
      attempts: 2,
      response_status: 200,
      error: null,
      updated_at: NOW + 5,
    });
    assert.deepEqual(await store.runDeliveries(id), [{
      ...delivery,
      status: "delivered",
      attempts: 2,
      response_status: 200,
      error: null,
      updated_at: NOW + 5,
    }]);
    assert.deepEqual(await store.runDeliveries("other"), []);
  });
}
