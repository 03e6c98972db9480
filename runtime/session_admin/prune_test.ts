import assert from "node:assert/strict";
import { sqliteHandle } from "../store/sqlite/_testing.ts";
import { currentProcess } from "../core/process_identity.ts";
import { addSessions, count, recordingHooks, tempStore } from "./_testing.ts";
import { pruneSessions } from "./prune.ts";

const DAY = 86_400_000;

Deno.test("prune --dry-run changes nothing and reports exactly the ids prune then deletes; the hook hears them once", async () => {
  await using fx = await tempStore();
  const sessions = await addSessions(fx, 1000);
  // Session i was last updated i/10 days (plus half a day) before "now".
  const now = fx.clock.at + DAY;
  sqliteHandle(fx.store).immediate(() => {
    sessions.forEach((s, i) => {
      const updated = now - (i / 10) * DAY - DAY / 2;
      sqliteHandle(fx.store).stmt("UPDATE sessions SET updated_at = ? WHERE id = ?").run(updated, s.id);
      s.updated_at = updated;
    });
  });
  fx.clock.at = now;
  const me = currentProcess();
  const held = sessions[999]!;
  sqliteHandle(fx.store).stmt(
    "UPDATE sessions SET status = 'running', owner_host = ?, owner_pid = ?, owner_started = ? WHERE id = ?",
  )
    .run(me.host, me.pid, me.started, held.id);

  const expected = sessions.filter((s) => s.job === "report" && s.updated_at < now - 30 * DAY && s !== held)
    .sort((x, y) => x.created_at - y.created_at).map((s) => s.id);
  const before = count(fx.store, "SELECT count(*) FROM messages");
  const hooks = recordingHooks();

  const preview = await pruneSessions(fx.store, {
    olderThanMs: 30 * DAY,
    job: "report",
    dryRun: true,
    hooks,
  });
  assert.deepEqual(preview.ids, expected);
  assert.ok(expected.length > 50, "the fixture has candidates, archived ones included");
  assert.ok(expected.some((id) => sessions.find((s) => s.id === id)!.archived));
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 1000);
  assert.equal(count(fx.store, "SELECT count(*) FROM messages"), before);
  assert.equal(hooks.deletes.length, 0);

  const pruned = await pruneSessions(fx.store, { olderThanMs: 30 * DAY, job: "report", hooks });
  assert.deepEqual(pruned.ids, preview.ids);
  assert.deepEqual(hooks.deletes, [{ session_id: expected[0], reason: "prune", deleted_ids: expected }]);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 1000 - expected.length);
  assert.equal(count(fx.store, "SELECT count(*) FROM messages"), before - 3 * expected.length);
  assert.equal(
    count(fx.store, "SELECT count(*) FROM sessions WHERE job = 'report' AND updated_at < ?", now - 30 * DAY),
    1,
    "only the session a live process holds is left",
  );
  assert.deepEqual(pruned.skipped.map((s) => s.id), [held.id]);

  const again = await pruneSessions(fx.store, { olderThanMs: 30 * DAY, job: "report", hooks });
  assert.deepEqual(again.ids, []);
  assert.equal(hooks.deletes.length, 1, "nothing pruned, no hook");
});

Deno.test("a big prune deletes in short batches, re-checking each: a session taken meanwhile is skipped", async () => {
  await using fx = await tempStore();
  const sessions = await addSessions(fx, 10);
  fx.clock.at += 40 * DAY;
  const me = currentProcess();
  let pauses = 0;
  // Between batches, another process starts running session 5 and deletes session 7.
  fx.clock.sleep = () => {
    if (pauses++ === 0) {
      sqliteHandle(fx.store).stmt(
        "UPDATE sessions SET status = 'running', owner_host = ?, owner_pid = ?, owner_started = ? WHERE id = ?",
      )
        .run(me.host, me.pid, me.started, sessions[5]!.id);
      sqliteHandle(fx.store).stmt("DELETE FROM sessions WHERE id = ?").run(sessions[7]!.id);
    }
    return Promise.resolve();
  };
  const hooks = recordingHooks();
  const result = await pruneSessions(fx.store, { olderThanMs: 30 * DAY, hooks, batchMessages: 6 });
  const expected = sessions.filter((_, i) => i !== 5 && i !== 7).map((s) => s.id);
  assert.equal(pauses, 4, "5 batches of 2 sessions (3 messages each)");
  assert.deepEqual(result.ids, expected);
  assert.deepEqual(result.skipped.map((s) => s.id), [sessions[5]!.id]);
  assert.deepEqual(hooks.deletes, [{ session_id: expected[0], reason: "prune", deleted_ids: expected }]);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 1);
});
