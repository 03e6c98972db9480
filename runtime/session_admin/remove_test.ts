import assert from "node:assert/strict";
import { sqliteHandle } from "../store/sqlite/_testing.ts";
import { NotFoundError } from "../core/errors.ts";
import { currentProcess } from "../core/process_identity.ts";
import type { Store } from "../store/store.ts";
import { addSessions, count, recordingHooks, tempStore } from "./_testing.ts";
import { SessionBusyError } from "../store/errors.ts";
import { archiveSessions, deleteSessions } from "./remove.ts";

const HOUR = 3_600_000;

function rowsOf(store: Store, id: string) {
  return {
    sessions: count(store, "SELECT count(*) FROM sessions WHERE id = ?", id),
    messages: count(store, "SELECT count(*) FROM messages WHERE session_id = ?", id),
    state: count(store, "SELECT count(*) FROM session_kv WHERE session_id = ?", id),
    leases: count(store, "SELECT count(*) FROM compaction_leases WHERE session_id = ?", id),
    log: count(store, "SELECT count(*) FROM compaction_log WHERE session_id = ?", id),
    runs: count(store, "SELECT count(*) FROM schedule_runs WHERE session_id = ?", id),
  };
}

async function addDependents(store: Store, id: string, leaseExpiresAt: number): Promise<void> {
  await store.setState(id, "loop", { every: "5m" });
  sqliteHandle(store).stmt(
    `INSERT INTO compaction_leases VALUES (?, 'h', 1, 's', 'n', 0, ?)`,
  ).run(id, leaseExpiresAt);
  sqliteHandle(store).stmt(
    `INSERT INTO compaction_log (session_id, kind, reason, before_tokens, after_tokens, messages_removed, created_at)
     VALUES (?, 'summarize', 'manual', 10, 5, 3, 0)`,
  ).run(id);
  sqliteHandle(store).stmt(
    `INSERT INTO schedule_runs (job, slot, status, claimed_at, session_id) VALUES ('nightly', ?, 'done', 0, ?)`,
  ).run(Math.floor(Math.random() * 1e9), id);
}

function setOwner(
  store: Store,
  id: string,
  owner: { host: string; pid: number; started: string },
  status = "running",
) {
  sqliteHandle(store).stmt(
    "UPDATE sessions SET status = ?, owner_host = ?, owner_pid = ?, owner_started = ? WHERE id = ?",
  )
    .run(status, owner.host, owner.pid, owner.started, id);
}

Deno.test("delete removes a session with its messages, state, leases and log in one go, then fires the hook once", async () => {
  await using fx = await tempStore();
  const [a, b, c] = await addSessions(fx, 3);
  await addDependents(fx.store, a!.id, 0);
  await addDependents(fx.store, b!.id, 0);
  const hooks = recordingHooks();
  let seenDuringHook: number | undefined;
  hooks.onSessionDelete = (payload) => {
    seenDuringHook = count(fx.store, "SELECT count(*) FROM sessions WHERE id = ?", a!.id);
    hooks.deletes.push(payload);
    return Promise.resolve();
  };

  const deleted = await deleteSessions(fx.store, [a!.id, b!.id], { hooks });
  assert.deepEqual(deleted, [a!.id, b!.id]);
  assert.deepEqual(hooks.deletes, [{ session_id: a!.id, reason: "delete", deleted_ids: [a!.id, b!.id] }]);
  assert.equal(seenDuringHook, 0, "the hook runs after the commit");
  for (const id of deleted) {
    assert.deepEqual(rowsOf(fx.store, id), {
      sessions: 0,
      messages: 0,
      state: 0,
      leases: 0,
      log: 0,
      runs: 0,
    });
  }
  assert.equal(
    count(fx.store, "SELECT count(*) FROM schedule_runs WHERE session_id IS NULL"),
    2,
    "slots kept",
  );
  assert.equal(rowsOf(fx.store, c!.id).messages, 3, "other sessions untouched");

  await assert.rejects(deleteSessions(fx.store, [a!.id], { hooks }), (e: Error) => {
    assert.ok(e instanceof NotFoundError);
    assert.match(e.message, new RegExp(`unknown session id "${a!.id}"`));
    return true;
  });
  assert.equal(hooks.deletes.length, 1, "a repeated delete fires nothing");
});

Deno.test("delete is all or none and names every unknown id", async () => {
  await using fx = await tempStore();
  const [a, b] = await addSessions(fx, 2);
  const hooks = recordingHooks();
  await assert.rejects(
    deleteSessions(fx.store, [a!.id, "nope-1", b!.id, "nope-2"], { hooks }),
    (e: Error) => {
      assert.ok(e instanceof NotFoundError);
      assert.match(e.message, /"nope-1".*"nope-2".*nothing was changed/);
      return true;
    },
  );
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 2);
  assert.equal(hooks.deletes.length, 0);

  // `latest`, a unique prefix and a duplicate resolve to two sessions, deleted once each.
  const deleted = await deleteSessions(fx.store, ["latest", a!.id.slice(0, -2), a!.id], { hooks });
  assert.deepEqual(deleted, [b!.id, a!.id]);
  assert.deepEqual(hooks.deletes[0]!.deleted_ids, [b!.id, a!.id]);
});

Deno.test("delete refuses a session a live process holds, unless forced", async (t) => {
  await using fx = await tempStore();
  const me = currentProcess();
  const exited = new Deno.Command("true").spawn();
  const deadPid = exited.pid;
  await exited.status;

  const cases = [
    { name: "running, owner alive", owner: me, status: "running", busy: /running in pid/ },
    { name: "idle loop, owner alive", owner: me, status: "idle", busy: /running in pid/ },
    {
      name: "owner on another host",
      owner: { ...me, host: "elsewhere" },
      status: "running",
      busy: /on elsewhere/,
    },
    { name: "owner process gone", owner: { ...me, pid: deadPid }, status: "running", busy: null },
    { name: "finished, stale owner", owner: me, status: "success", busy: null },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const [s] = await addSessions(fx, 1);
      setOwner(fx.store, s!.id, c.owner, c.status);
      const hooks = recordingHooks();
      if (c.busy) {
        await assert.rejects(deleteSessions(fx.store, [s!.id], { hooks }), (e: Error) => {
          assert.ok(e instanceof SessionBusyError);
          assert.match(e.message, c.busy);
          assert.match(e.message, /--force/);
          return true;
        });
        assert.equal(rowsOf(fx.store, s!.id).sessions, 1);
        assert.equal(hooks.deletes.length, 0);
      }
      assert.deepEqual(await deleteSessions(fx.store, [s!.id], { hooks, force: c.busy !== null }), [s!.id]);
      assert.equal(hooks.deletes.length, 1);
    });
  }

  await t.step("compaction lease: unexpired and held refuses, expired allows", async () => {
    const [held, expired] = await addSessions(fx, 2);
    const lease = sqliteHandle(fx.store).stmt(
      `INSERT INTO compaction_leases VALUES (?, ?, ?, ?, 'nonce', 0, ?)`,
    );
    lease.run(held!.id, me.host, me.pid, me.started, fx.clock.now() + HOUR);
    lease.run(expired!.id, me.host, me.pid, me.started, fx.clock.now() - 1);
    await assert.rejects(deleteSessions(fx.store, [expired!.id, held!.id]), (e: Error) => {
      assert.ok(e instanceof SessionBusyError);
      assert.deepEqual(e.busy.map((b) => b.id), [held!.id]);
      assert.match(e.message, /compacting in pid/);
      return true;
    });
    assert.equal(rowsOf(fx.store, expired!.id).sessions, 1, "all or none");
    assert.deepEqual(await deleteSessions(fx.store, [expired!.id]), [expired!.id]);
  });
});

Deno.test("archive hides and keeps, fires once; unarchive restores and fires nothing", async () => {
  await using fx = await tempStore();
  const [a, b] = await addSessions(fx, 2);
  const hooks = recordingHooks();
  fx.clock.at += HOUR;
  const result = await archiveSessions(fx.store, [a!.id, b!.id], { hooks });
  assert.deepEqual(result, { changed: [a!.id, b!.id], unchanged: [] });
  assert.deepEqual(hooks.deletes, [{ session_id: a!.id, reason: "archive", deleted_ids: [a!.id, b!.id] }]);
  assert.deepEqual(await fx.store.listSessions(), []);
  const archived = await fx.store.listSessions({ archived: true });
  assert.deepEqual(archived.map((s) => s.id).sort(), [a!.id, b!.id].sort());
  assert.equal(archived[0]!.archived_at, new Date(fx.clock.at).toISOString());
  assert.equal(rowsOf(fx.store, a!.id).messages, 3, "messages kept");

  assert.deepEqual(await archiveSessions(fx.store, [a!.id], { hooks }), { changed: [], unchanged: [a!.id] });
  assert.equal(hooks.deletes.length, 1, "nothing newly archived, no hook");

  assert.deepEqual(await fx.store.unarchiveSessions([a!.id]), { changed: [a!.id], unchanged: [] });
  assert.deepEqual((await fx.store.listSessions()).map((s) => s.id), [a!.id]);
  assert.equal(hooks.deletes.length, 1);

  await assert.rejects(archiveSessions(fx.store, ["missing"], { hooks }), NotFoundError);
  setOwner(fx.store, a!.id, currentProcess());
  await assert.rejects(archiveSessions(fx.store, [a!.id], { hooks }), SessionBusyError);
  assert.deepEqual((await archiveSessions(fx.store, [a!.id], { hooks, force: true })).changed, [a!.id]);
});
