/** Contract: what the store holds (`store info`), and whole sessions exported and imported verbatim. */
import assert from "node:assert/strict";
import type { SessionExport } from "../../../runtime/store/store.ts";
import { compactRows, liveHolder, type OpenStore, SetClock } from "./_testing.ts";

/** An export without the ids the receiving store numbers itself. */
function comparable(data: SessionExport) {
  return {
    ...data,
    messages: data.messages.map(({ id: _id, ...m }) => m),
    compactions: data.compactions.map(({ id: _id, ...c }) => c),
  };
}

export function copyContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: store info names the backend and schema version, and counts rows`, async () => {
    await using fx = await open();
    const empty = await fx.store.storeInfo();
    assert.ok(empty.schema_version >= 1);
    assert.deepEqual(Object.values(empty.counts), [0, 0, 0, 0, 0, 0]);
    const s = await fx.store.createSession({ job: "j" });
    await fx.store.appendMessages(s.id, [{ role: "user", content: "a" }, {
      role: "assistant",
      content: "b",
    }]);
    await fx.store.setState(s.id, "loop", { tick: 1 });
    await fx.store.setPluginState("p", "k", 1);
    const info = await fx.store.storeInfo();
    assert.equal(info.backend, empty.backend);
    assert.deepEqual(info.counts, {
      sessions: 1,
      messages: 2,
      session_state: 1,
      compaction_log: 0,
      schedule_runs: 0,
      plugin_state: 1,
    });
  });

  Deno.test(`${name}: a session exported and imported is the same, compacted rows included; once only`, async () => {
    await using source = await open();
    await using target = await open();
    const a = source.store;
    const s = await a.createSession({ job: "copy", model: "m" });
    const rows = await a.appendMessages(s.id, [
      { role: "user", content: "one" },
      { role: "assistant", content: "two", tool_calls: [{ id: "c1", name: "shell", arguments: "{}" }] },
      { role: "tool", content: "three", tool_call_id: "c1", name: "shell" },
    ]);
    await compactRows(a, s.id, [rows[0]!.id, rows[1]!.id], [{
      role: "user",
      content: "summary",
      kind: "summary",
      pos: rows[0]!.pos,
    }]);
    await a.setState(s.id, "loop", { tick: 4 });
    await a.startStep(s.id, { step: 1, input: "one" });
    await a.startStep(s.id, { step: 1, input: "one" });
    await a.finishStep(s.id, 1);
    await a.startStep(s.id, { step: 2, input: "two" });
    await a.updateSession(s.id, { status: "success", archived_at: 5 });
    const data = (await a.exportSession(s.id))!;
    assert.deepEqual(data.steps.map((r) => [r.step, r.attempt, r.status]), [[1, 2, "done"], [
      2,
      1,
      "started",
    ]]);
    assert.deepEqual(data.messages.map((m) => [m.seq, m.content, m.active]), [
      [1, "one", false],
      [2, "two", false],
      [3, "three", true],
      [4, "summary", true],
    ]);
    assert.equal(data.compactions.length, 1);
    assert.equal(await a.exportSession("missing"), undefined);

    const b = target.store;
    assert.equal(await b.importSession(data), true);
    assert.equal(await b.importSession(data), false, "a second import writes nothing");
    assert.deepEqual(comparable((await b.exportSession(s.id))!), comparable(data));
    assert.deepEqual(await b.sessionIds(), [s.id]);
    assert.deepEqual(
      (await b.activeMessages(s.id)).map((m) => m.content),
      (await a.activeMessages(s.id)).map((m) => m.content),
    );
    const [next] = await b.appendMessages(s.id, [{ role: "user", content: "five" }]);
    assert.equal(next!.seq, 5, "the next append follows the highest copied seq");
    assert.equal((await b.storeInfo()).counts.messages, 5);
  });

  Deno.test(`${name}: schedule runs and plugin state are exported and imported verbatim; present rows are kept`, async () => {
    const clock = new SetClock(Date.UTC(2026, 0, 2));
    await using source = await open({ clock });
    await using target = await open();
    const a = source.store;
    const me = liveHolder();
    const lease = { now: Date.UTC(2026, 0, 2), lease_ms: 60_000 };
    await a.claimSlots([{ job: "nightly", slot: 1_000 }, { job: "hourly", slot: 10 }], me, lease);
    await a.finishRuns([{
      claim: { job: "nightly", slot: 1_000 },
      holder: me,
      outcome: { status: "success", session_id: "s-1", now: lease.now + 5, note: "done" },
    }]);
    await a.claimSlots([{ job: "nightly", slot: 2_000, note: "catch-up" }], me, lease);
    await a.recordSkipped({ job: "hourly", slot: 5, note: "missed" }, me, lease.now);
    await a.setPluginState("counter", "n", 3);
    clock.at += 1_000;
    await a.setPluginState("counter", "list", ["a", { b: null }]);
    await a.setPluginState("audit", "seen", { ids: [1, 2] });

    assert.deepEqual(await a.scheduleRunJobs(), ["hourly", "nightly"]);
    const nightly = await a.exportScheduleRuns("nightly");
    assert.deepEqual(nightly.map((r) => [r.slot, r.status, r.note, r.session_id]), [
      [1_000, "success", "done", "s-1"],
      [2_000, "running", "catch-up", null],
    ]);
    assert.equal(nightly[1]!.holder_nonce, me.nonce, "a live claim keeps its holder and lease");
    assert.equal(nightly[1]!.lease_expires_at, lease.now + lease.lease_ms);
    assert.deepEqual((await a.exportScheduleRuns("hourly")).map((r) => [r.slot, r.status]), [
      [5, "skipped"],
      [10, "running"],
    ]);
    assert.deepEqual(await a.exportScheduleRuns("missing"), []);
    assert.deepEqual(await a.statefulPlugins(), ["audit", "counter"]);
    const counter = await a.exportPluginState("counter");
    assert.deepEqual(counter, [
      { plugin: "counter", key: "list", value: ["a", { b: null }], updated_at: clock.at },
      { plugin: "counter", key: "n", value: 3, updated_at: clock.at - 1_000 },
    ]);

    const b = target.store;
    // The target already has one of the slots and one of the keys, with other values: they are kept.
    await b.recordSkipped({ job: "nightly", slot: 1_000, note: "theirs" }, liveHolder(), 7);
    await b.setPluginState("counter", "n", 99);
    const runs = [...nightly, ...await a.exportScheduleRuns("hourly")];
    assert.equal(await b.importScheduleRuns(runs), 3);
    assert.equal(await b.importScheduleRuns(runs), 0, "a second import stores nothing");
    assert.equal(await b.importScheduleRuns([]), 0);
    assert.deepEqual(await b.exportScheduleRuns("hourly"), await a.exportScheduleRuns("hourly"));
    const [theirs, copied] = await b.exportScheduleRuns("nightly");
    assert.deepEqual([theirs!.status, theirs!.note], ["skipped", "theirs"]);
    assert.deepEqual(copied, nightly[1]);
    const plugins = [...counter, ...await a.exportPluginState("audit")];
    assert.equal(await b.importPluginState(plugins), 2);
    assert.equal(await b.importPluginState(plugins), 0, "a second import stores nothing");
    assert.equal(await b.getPluginState("counter", "n"), 99);
    assert.deepEqual(await b.getPluginState("counter", "list"), ["a", { b: null }]);
    assert.deepEqual(await b.exportPluginState("audit"), await a.exportPluginState("audit"));
    assert.deepEqual((await b.liveClaims()).map((r) => `${r.job} ${r.slot}`).sort(), [
      "hourly 10",
      "nightly 2000",
    ]);
    const { counts } = await b.storeInfo();
    assert.deepEqual([counts.schedule_runs, counts.plugin_state], [4, 3]);
  });
}

export function queueCopyContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: queued runs, their events and deliveries, and API tokens copy verbatim; once only`, async () => {
    await using source = await open();
    await using target = await open();
    const a = source.store;
    const holder = liveHolder();
    const base = { job: "q", job_path: "/jobs/q.yaml", job_snapshot: '{"spec":{"name":"q"}}', now: 1_000 };
    const done =
      (await a.submitRun({ ...base, inputs: { n: "1" }, key: "k-1", trigger: "api", labels: { t: "x" } }))
        .run;
    await a.claimRuns({ holder, now: 2_000, lease_ms: 60_000, max: 1 });
    await a.appendRunEvents(done.id, [{ type: "session.start", session_id: "s1" }, {
      type: "result",
      ok: true,
    }]);
    await a.finishRun({
      id: done.id,
      holder,
      status: "success",
      session_id: "s1",
      result: { status: "success", text: "café\u{1F600}" },
      exit_code: 0,
      now: 3_000,
    });
    const queued = (await a.submitRun({ ...base, job: "other", inputs: {}, group: "g", group_limit: 2 })).run;
    await a.recordDelivery({
      id: "d-1",
      run_id: done.id,
      target: "https://hooks.example/x",
      event: "run.success",
      status: "delivered",
      attempts: 2,
      response_status: 200,
      error: null,
      created_at: 3_000,
      updated_at: 3_500,
    });
    await a.createToken({
      id: "tok1",
      name: "ci",
      hash: "ab".repeat(32),
      scopes: ["runs:read"],
      expires_at: null,
      now: 10,
    });
    await a.revokeToken("tok1", 20);

    const copy = async () => {
      const b = target.store;
      let stored = 0;
      for (const job of await a.queuedRunJobs()) {
        stored += await b.importQueuedRuns(await a.exportQueuedRuns(job));
      }
      for (const run of await a.runsWithEvents()) {
        stored += await b.importRunEvents(await a.runEvents(run, 0));
      }
      for (const run of await a.runsWithDeliveries()) {
        stored += await b.importDeliveries(await a.runDeliveries(run));
      }
      stored += await b.importApiTokens(await a.exportApiTokens());
      return stored;
    };
    assert.equal(await copy(), 2 + 2 + 1 + 1);
    assert.equal(await copy(), 0, "a second copy stores nothing");
    const b = target.store;
    assert.deepEqual(await b.queuedRunJobs(), ["other", "q"]);
    assert.deepEqual(await b.getRun(done.id), await a.getRun(done.id));
    assert.deepEqual(await b.getRun(queued.id), await a.getRun(queued.id));
    assert.deepEqual(await b.runEvents(done.id, 0), await a.runEvents(done.id, 0));
    assert.deepEqual(await b.runDeliveries(done.id), await a.runDeliveries(done.id));
    assert.deepEqual(await b.exportApiTokens(), await a.exportApiTokens());
    assert.equal((await b.tokenById("tok1"))?.hash, "ab".repeat(32));
    // The copied queue works on: the queued run is claimed there, a key submits once there too.
    const claimed = await b.claimRuns({ holder: liveHolder(), now: 4_000, lease_ms: 60_000, max: 5 });
    assert.deepEqual(claimed.map((r) => r.id), [queued.id]);
    assert.equal((await b.submitRun({ ...base, inputs: {}, key: "k-1" })).deduplicated, true);
    assert.equal(await b.appendRunEvents(done.id, [{ type: "late" }]), undefined);
    assert.deepEqual((await b.runEvents(done.id, 2)).map((e) => e.seq), [3]);
  });
}
