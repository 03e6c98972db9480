/** Contract: delete, archive and recovery, prune, liveness and orphaned sessions. */
import assert from "node:assert/strict";
import { NotFoundError } from "../../../runtime/core/errors.ts";
import { SessionBusyError } from "../../../runtime/store/errors.ts";
import type { Store } from "../../../runtime/store/store.ts";
import { compactRows, deadHolder, liveHolder, type OpenStore, ownedBy, SetClock } from "./_testing.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A session with messages, state, plugin state, a compaction log row and a finished schedule run. */
async function withDependents(store: Store, job = "j") {
  const s = await store.createSession({ job });
  const rows = await store.appendMessages(s.id, [
    { role: "user", content: "one" },
    { role: "assistant", content: "two" },
    { role: "user", content: "three" },
  ]);
  await store.setState(s.id, "loop", { status: "done" });
  await compactRows(store, s.id, [rows[0]!.id], [{
    role: "user",
    content: "summary",
    kind: "summary",
    pos: 1,
  }]);
  const runner = liveHolder();
  const slot = Math.floor(Math.random() * 1e9);
  await store.claimSlots([{ job: "nightly", slot }], runner, { now: 0, lease_ms: 1 });
  await store.finishRuns([
    {
      claim: { job: "nightly", slot },
      holder: runner,
      outcome: { status: "success", session_id: s.id, now: 1 },
    },
  ]);
  return { id: s.id, slot };
}

export function adminContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: deleteSessions removes sessions with everything of theirs, keeping schedule slots`, async () => {
    await using fx = await open();
    const { store } = fx;
    const a = await withDependents(store);
    const b = await withDependents(store);
    const c = await withDependents(store);
    assert.deepEqual(await store.deleteSessions([a.id, b.id]), [a.id, b.id]);
    for (const { id, slot } of [a, b]) {
      assert.equal(await store.getSession(id), undefined);
      assert.deepEqual(await store.allMessages(id), []);
      assert.equal(await store.getState(id, "loop"), undefined);
      assert.deepEqual(await store.compactionLog(id), []);
      const run = (await store.recentRuns("nightly", 10)).find((r) => r.slot === slot)!;
      assert.deepEqual([run.status, run.session_id], ["success", null], "the slot is kept");
    }
    assert.equal((await store.allMessages(c.id)).length, 4, "other sessions untouched");
    await assert.rejects(store.deleteSessions([a.id]), (e: Error) => {
      assert.ok(e instanceof NotFoundError);
      assert.match(e.message, new RegExp(`unknown session id "${a.id}"`));
      return true;
    });
  });

  Deno.test(`${name}: deleteSessions is all or none and names every unknown id`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const { store } = fx;
    const a = await store.createSession({ job: "j" });
    clock.at += 1;
    const b = await store.createSession({ job: "j" });
    await assert.rejects(store.deleteSessions([a.id, "nope-1", b.id, "nope-2"]), (e: Error) => {
      assert.ok(e instanceof NotFoundError);
      assert.match(e.message, /"nope-1".*"nope-2".*nothing was changed/);
      return true;
    });
    assert.equal((await store.listSessions()).length, 2);
    // `latest`, a unique prefix and a duplicate resolve to two sessions, deleted once each.
    assert.deepEqual(await store.deleteSessions(["latest", a.id.slice(0, -2), a.id]), [b.id, a.id]);
  });

  Deno.test(`${name}: a session a live process holds is refused unless forced`, async (t) => {
    await using fx = await open();
    const { store } = fx;
    const me = liveHolder();
    const cases = [
      { name: "running, owner alive", owner: me, status: "running" as const, busy: /running in pid/ },
      { name: "idle loop, owner alive", owner: me, status: "idle" as const, busy: /running in pid/ },
      {
        name: "owner on another host",
        owner: { ...me, host: "elsewhere" },
        status: "running" as const,
        busy: /on elsewhere/,
      },
      { name: "owner process gone", owner: await deadHolder(), status: "running" as const, busy: null },
      { name: "finished, stale owner", owner: me, status: "success" as const, busy: null },
    ];
    for (const c of cases) {
      await t.step(c.name, async () => {
        const { id } = await store.createSession({ job: "j" });
        await store.updateSession(id, { status: c.status, ...ownedBy(c.owner) });
        assert.deepEqual((await store.findBusySessions([id])).length, c.busy ? 1 : 0);
        if (c.busy) {
          await assert.rejects(store.deleteSessions([id]), (e: Error) => {
            assert.ok(e instanceof SessionBusyError);
            assert.match(e.message, c.busy);
            assert.match(e.message, /--force/);
            return true;
          });
          assert.ok(await store.getSession(id));
        }
        assert.deepEqual(await store.deleteSessions([id], { force: c.busy !== null }), [id]);
      });
    }
    await t.step("compaction lease: unexpired and held refuses, expired allows", async () => {
      const held = await store.createSession({ job: "j" });
      const expired = await store.createSession({ job: "j" });
      await store.acquireLease({ sessionId: held.id, holder: me, now: Date.now(), ttlMs: HOUR });
      await store.acquireLease({ sessionId: expired.id, holder: me, now: Date.now() - HOUR, ttlMs: 1 });
      assert.deepEqual((await store.findBusySessions([expired.id, held.id])).map((b) => b.id), [held.id]);
      await assert.rejects(store.deleteSessions([expired.id, held.id]), (e: Error) => {
        assert.ok(e instanceof SessionBusyError);
        assert.deepEqual(e.busy.map((b) => b.id), [held.id]);
        assert.match(e.message, /compacting in pid/);
        return true;
      });
      assert.ok(await store.getSession(expired.id), "all or none");
      assert.deepEqual(await store.deleteSessions([expired.id]), [expired.id]);
    });
    await t.step("an owner and a lease together are both named", async () => {
      const { id } = await store.createSession({ job: "j" });
      await store.updateSession(id, ownedBy(me));
      await store.acquireLease({ sessionId: id, holder: me, now: Date.now(), ttlMs: HOUR });
      const [busy] = await store.findBusySessions([id, "unknown"]);
      assert.equal(busy?.id, id);
      assert.match(busy!.reason, /^running in pid \d+ on .*; compacting in pid \d+ on .*, lease until /);
    });
  });

  Deno.test(`${name}: archive hides and keeps everything; unarchive recovers the session`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const { store } = fx;
    const a = await withDependents(store);
    const b = await store.createSession({ job: "j" });
    clock.at += HOUR;
    assert.deepEqual(await store.archiveSessions([a.id, b.id]), { changed: [a.id, b.id], unchanged: [] });
    assert.deepEqual(await store.listSessions(), []);
    const archived = await store.listSessions({ archived: true });
    assert.deepEqual(archived.map((s) => s.id).sort(), [a.id, b.id].sort());
    assert.equal(archived[0]!.archived_at, new Date(clock.at).toISOString());
    assert.equal((await store.allMessages(a.id)).length, 4, "messages kept");
    assert.deepEqual(await store.getState(a.id, "loop"), { status: "done" }, "state kept");
    assert.deepEqual(await store.archiveSessions([a.id]), { changed: [], unchanged: [a.id] });

    assert.deepEqual(await store.unarchiveSessions([a.id]), { changed: [a.id], unchanged: [] });
    assert.deepEqual((await store.listSessions()).map((s) => s.id), [a.id]);
    assert.equal((await store.getSession(a.id))!.archived_at, null);
    assert.equal((await store.activeMessages(a.id)).length, 3, "the transcript is as it was");
    assert.deepEqual(await store.unarchiveSessions([a.id]), { changed: [], unchanged: [a.id] });

    await assert.rejects(store.archiveSessions(["missing"]), NotFoundError);
    await assert.rejects(store.unarchiveSessions(["missing"]), NotFoundError);
    await store.updateSession(a.id, ownedBy(liveHolder()));
    await assert.rejects(store.archiveSessions([a.id]), SessionBusyError);
    assert.deepEqual((await store.archiveSessions([a.id], { force: true })).changed, [a.id]);
  });

  Deno.test(`${name}: pruneSessions deletes idle sessions, archived ones too, skips busy ones; a dry run agrees`, async () => {
    const clock = new SetClock(Date.UTC(2026, 0, 1));
    await using fx = await open({ clock });
    const { store } = fx;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      clock.at = Date.UTC(2026, 0, 1) + i * DAY;
      const { id } = await store.createSession({ job: i % 2 ? "odd" : "even" });
      await store.appendMessages(id, [{ role: "user", content: `session ${i}` }]);
      ids.push(id);
    }
    await store.archiveSessions([ids[2]!]);
    clock.at = Date.UTC(2026, 0, 1) + 10 * DAY;
    await store.updateSession(ids[4]!, { status: "running", ...ownedBy(liveHolder()) });
    clock.at = Date.UTC(2026, 0, 1) + 20 * DAY;
    // Updated more than 12 days ago: sessions 0–7 except 4 (its owner updated it at day 10).
    const expected = [0, 2, 6].map((i) => ids[i]!);
    const preview = await store.pruneSessions({ olderThanMs: 12 * DAY, job: "even", dryRun: true });
    assert.deepEqual(preview, { cutoff: clock.at - 12 * DAY, ids: expected, skipped: [] });
    assert.equal((await store.listSessions({ job: "even" })).length, 5, "a dry run changes nothing");

    const pruned = await store.pruneSessions({ olderThanMs: 12 * DAY, job: "even" });
    assert.deepEqual(pruned.ids, expected);
    for (const id of expected) assert.equal(await store.getSession(id), undefined);
    assert.ok(await store.getSession(ids[1]!), "another job is untouched");

    clock.at = Date.UTC(2026, 0, 1) + 40 * DAY;
    const everything = await store.pruneSessions({ olderThanMs: DAY });
    assert.deepEqual(
      everything.skipped.map((s) => s.id),
      [ids[4]!],
      "a busy session is skipped, never forced",
    );
    assert.match(everything.skipped[0]!.reason, /running in pid/);
    assert.deepEqual(everything.ids, ids.filter((_, i) => ![0, 2, 4, 6].includes(i)));
    assert.deepEqual((await store.pruneSessions({ olderThanMs: DAY })).ids, []);
  });

  Deno.test(`${name}: orphanedSessions lists running sessions with a dead owner and their stored states`, async () => {
    await using fx = await open();
    const { store } = fx;
    const dead = await deadHolder();
    const make = async (
      owner: ReturnType<typeof ownedBy> | null,
      state: { key: string; status: string } | null,
      more: { status?: "running" | "success"; archive?: boolean } = {},
    ) => {
      const { id } = await store.createSession({ job: "j", status: more.status ?? "running" });
      if (owner) await store.updateSession(id, owner);
      if (state) await store.setState(id, state.key, { status: state.status, tick: 3 });
      if (more.archive) await store.archiveSessions([id], { force: true });
      return id;
    };
    const loop = await make(ownedBy(dead), { key: "loop", status: "active" });
    const beat = await make(ownedBy(dead), { key: "heartbeat", status: "active" });
    await make(ownedBy(liveHolder()), { key: "loop", status: "active" });
    const paused = await make(ownedBy(dead), { key: "loop", status: "paused" });
    await make(ownedBy(dead), { key: "other", status: "active" });
    await make(ownedBy(dead), { key: "loop", status: "active" }, { status: "success" });
    await make(ownedBy(dead), { key: "loop", status: "active" }, { archive: true });
    await make(null, { key: "loop", status: "active" });
    const orphans = await store.orphanedSessions(["loop", "heartbeat"]);
    assert.deepEqual(orphans.map((o) => o.id).sort(), [loop, beat, paused].sort());
    assert.deepEqual(orphans.find((o) => o.id === loop), {
      id: loop,
      job: "j",
      ...ownedBy(dead),
      state: { loop: { status: "active", tick: 3 } },
    });
    assert.deepEqual(orphans.find((o) => o.id === paused)?.state, { loop: { status: "paused", tick: 3 } });
    assert.deepEqual((await store.orphanedSessions(["heartbeat"])).map((o) => o.id), [beat]);
    assert.deepEqual(await store.orphanedSessions([]), []);
  });
}
