/**
 * Contract: approvals parked for a decision over the API. Only the first decision counts, whichever
 * connection makes it; a pending approval makes its running run show `waiting_approval` (and only while it is
 * pending), in `getRun` and `listRuns` alike, without changing what claims, leases and recovery see; a
 * listing of pending ones leaves out those whose time is up.
 */
import assert from "node:assert/strict";
import type { NewApproval } from "../../../runtime/store/store.ts";
import { deadHolder, liveHolder, type OpenStore } from "./_testing.ts";

const NOW = 2_000_000;

function newApproval(overrides: Partial<NewApproval> = {}): NewApproval {
  return {
    id: "a1",
    run_id: null,
    session_id: "s1",
    job: "j",
    tool: "shell",
    tool_call_id: "call_1",
    server: null,
    arguments: { command: "rm -rf build" },
    subject: null,
    reason: "rm is not in tools.shell.allow",
    rule: "tools.shell.allow: [rm]",
    created_at: NOW,
    expires_at: NOW + 60_000,
    ...overrides,
  };
}

export function approvalContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: approvals: stored pending, decided once by whichever connection is first`, async () => {
    await using fx = await open();
    const { store } = fx;
    const made = await store.createApproval(newApproval({ server: "gh", subject: "/repo/build" }));
    assert.deepEqual(made, {
      ...newApproval({ server: "gh", subject: "/repo/build" }),
      status: "pending",
      decision_reason: null,
      decided_by: null,
      decided_at: null,
    });
    const other = await fx.connect();
    assert.deepEqual(await other.getApproval("a1"), made);
    assert.equal(await other.getApproval("nope"), undefined);

    const first = await other.decideApproval({
      id: "a1",
      status: "allowed",
      reason: "ok",
      by: "t1",
      now: NOW + 5,
    });
    assert.equal(first?.decided, true);
    assert.equal(first?.approval.status, "allowed");
    assert.equal(first?.approval.decided_by, "t1");
    assert.equal(first?.approval.decided_at, NOW + 5);
    const second = await store.decideApproval({
      id: "a1",
      status: "denied",
      reason: "no",
      by: "t2",
      now: NOW + 9,
    });
    assert.equal(second?.decided, false);
    assert.equal(second?.approval.status, "allowed");
    assert.equal(second?.approval.decision_reason, "ok");
    assert.equal(
      await store.decideApproval({ id: "nope", status: "denied", reason: null, by: null, now: NOW }),
      undefined,
    );
  });

  Deno.test(`${name}: approvals: listed oldest first by status and run; pending leaves out expired ones`, async () => {
    await using fx = await open();
    const { store } = fx;
    await store.createApproval(newApproval({ id: "a1", run_id: "r1" }));
    await store.createApproval(
      newApproval({ id: "a2", run_id: "r2", created_at: NOW + 1, expires_at: NOW + 10 }),
    );
    await store.createApproval(newApproval({ id: "a3", run_id: "r1", created_at: NOW + 2 }));
    await store.decideApproval({ id: "a3", status: "denied", reason: null, by: "t1", now: NOW + 3 });
    assert.deepEqual((await store.listApprovals()).map((a) => a.id), ["a1", "a2", "a3"]);
    assert.deepEqual((await store.listApprovals({ status: "pending" })).map((a) => a.id), ["a1", "a2"]);
    assert.deepEqual(
      (await store.listApprovals({ status: "pending", now: NOW + 10 })).map((a) => a.id),
      ["a1"],
    );
    assert.deepEqual((await store.listApprovals({ run_id: "r1" })).map((a) => a.id), ["a1", "a3"]);
    assert.deepEqual((await store.listApprovals({ status: "denied" })).map((a) => a.id), ["a3"]);
    assert.deepEqual((await store.listApprovals({ limit: 1 })).map((a) => a.id), ["a1"]);
  });

  Deno.test(`${name}: approvals: a running run with a pending one shows waiting_approval, only then`, async () => {
    await using fx = await open();
    const { store } = fx;
    const holder = liveHolder();
    const { run } = await store.submitRun({
      job: "j",
      job_path: null,
      job_snapshot: "{}",
      inputs: {},
      now: NOW,
    });
    const [claimed] = await store.claimRuns({ holder, now: NOW, lease_ms: 60_000, max: 1 });
    assert.equal(claimed?.id, run.id);
    await store.createApproval(newApproval({ id: "a1", run_id: run.id }));
    const other = await fx.connect();
    assert.equal((await other.getRun(run.id))?.status, "waiting_approval");
    assert.deepEqual((await other.listRuns({ status: "waiting_approval" })).map((r) => r.id), [run.id]);
    assert.deepEqual(await other.listRuns({ status: "running" }), []);
    assert.equal((await other.listRuns())[0]?.status, "waiting_approval");
    // The queue itself still sees a running run it holds.
    assert.deepEqual((await store.renewRuns(holder, { now: NOW + 1, lease_ms: 60_000 })).held, [run.id]);
    assert.deepEqual(await store.runCounts(), { waiting_approval: 1 });

    await store.decideApproval({ id: "a1", status: "allowed", reason: null, by: "t1", now: NOW + 2 });
    assert.equal((await other.getRun(run.id))?.status, "running");
    assert.deepEqual((await other.listRuns({ status: "running" })).map((r) => r.id), [run.id]);
    assert.equal(
      await store.finishRun({
        id: run.id,
        holder,
        status: "success",
        session_id: null,
        result: null,
        exit_code: 0,
        now: NOW + 3,
      }),
      true,
    );
    assert.equal((await other.getRun(run.id))?.status, "success");
  });

  Deno.test(`${name}: approvals: a run recovered from a dead worker leaves no pending approval`, async () => {
    await using fx = await open();
    const { store } = fx;
    const { run } = await store.submitRun({
      job: "j",
      job_path: null,
      job_snapshot: "{}",
      inputs: {},
      now: NOW,
    });
    await store.claimRuns({ holder: await deadHolder(), now: NOW, lease_ms: 60_000, max: 1 });
    await store.createApproval(newApproval({ id: "a1", run_id: run.id }));
    await store.createApproval(newApproval({ id: "a2", run_id: "other" }));
    const [recovered] = await store.recoverRuns({ now: NOW + 10 });
    assert.equal(recovered?.status, "crashed");
    const gone = await store.getApproval("a1");
    assert.equal(gone?.status, "cancelled");
    assert.equal(gone?.decided_at, NOW + 10);
    assert.deepEqual((await store.listApprovals({ status: "pending" })).map((a) => a.id), ["a2"]);
  });

  Deno.test(`${name}: watchers: a store that notifies wakes on appends and decisions of another connection`, async () => {
    await using fx = await open();
    const { store } = fx;
    const other = await fx.connect();
    const appended = Promise.withResolvers<string>();
    const decided = Promise.withResolvers<string>();
    const stops = await Promise.all([
      store.watchRunEvents((id) => appended.resolve(id)),
      store.watchApprovals((id) => decided.resolve(id)),
    ]);
    try {
      await other.createApproval(newApproval({ id: "a1" }));
      await other.appendRunEvents("r1", [{ type: "x" }]);
      await other.decideApproval({ id: "a1", status: "denied", reason: null, by: null, now: NOW + 1 });
      if (store.notifies) {
        assert.equal(await appended.promise, "r1");
        assert.equal(await decided.promise, "a1");
      } else {
        // A store file tells nobody: its waiters look at it themselves.
        assert.equal(store.notifies, false);
      }
    } finally {
      await Promise.all(stops.map((stop) => stop()));
    }
  });
}
