import assert from "node:assert/strict";
import { ManualClock } from "../core/clock.ts";
import { currentProcess } from "../core/process_identity.ts";
import { fixture, transcript } from "./_testing.ts";
import { commitCompaction, type CommitRequest } from "./commit.ts";
import { acquireLease } from "./lease.ts";

const TTL = 60_000;

async function setup() {
  const clock = new ManualClock();
  const fx = await fixture(clock);
  fx.store.appendMessages(fx.sessionId, transcript(6));
  const holder = currentProcess();
  acquireLease(fx.store, { sessionId: fx.sessionId, holder, now: clock.now(), ttlMs: TTL });
  const active = fx.store.activeMessages(fx.sessionId);
  const middle = active.slice(4, 10);
  const request: CommitRequest = {
    sessionId: fx.sessionId,
    nonce: holder.nonce,
    now: clock.now(),
    kind: "summarize",
    reason: "manual",
    archive: middle.map((m) => m.id),
    insert: [{
      role: "user",
      content: "[Hermes compaction summary] s",
      kind: "summary",
      pos: middle[0]!.pos,
    }],
    beforeTokens: 1000,
    detail: {},
  };
  return { fx, clock, holder, active, middle, request };
}

function logCount(fx: { store: { db: { prepare(sql: string): { get(): unknown } } } }): number {
  return (fx.store.db.prepare("SELECT count(*) AS n FROM compaction_log").get() as { n: number }).n;
}

Deno.test("commit: archives the middle, places the summary there, keeps later appends after it", async () => {
  const { fx, active, middle, request } = await setup();
  await using _ = fx;
  const late = fx.store.appendMessages(fx.sessionId, [
    { role: "user", content: "appended meanwhile 1" },
    { role: "assistant", content: "appended meanwhile 2" },
  ]);
  const result = commitCompaction(fx.store, request);
  assert.equal(result.committed, true);
  const after = fx.store.activeMessages(fx.sessionId);
  assert.deepEqual(after.map((m) => m.id).filter((id) => id <= active.at(-1)!.id), [
    ...active.slice(0, 4).map((m) => m.id),
    ...active.slice(10).map((m) => m.id),
  ]);
  assert.equal(after[4]!.kind, "summary");
  assert.deepEqual(after.slice(-2).map((m) => m.id), late.map((m) => m.id));
  const archived = fx.store.allMessages(fx.sessionId).filter((m) => !m.active);
  assert.deepEqual(archived.map((m) => m.id), middle.map((m) => m.id));
  assert.equal(logCount(fx), 1);
});

Deno.test("commit: an expired lease writes nothing", async () => {
  const { fx, clock, request } = await setup();
  await using _ = fx;
  const before = fx.store.allMessages(fx.sessionId);
  const result = commitCompaction(fx.store, { ...request, now: clock.now() + TTL });
  assert.equal(result.committed, false);
  assert.match(!result.committed ? result.reason : "", /^the lease expired at /);
  assert.deepEqual(fx.store.allMessages(fx.sessionId), before);
  assert.equal(logCount(fx), 0);
  // The same commit one millisecond earlier succeeds.
  assert.equal(commitCompaction(fx.store, { ...request, now: clock.now() + TTL - 1 }).committed, true);
});

Deno.test("commit: a lease taken over by another holder writes nothing", async () => {
  const { fx, clock, request } = await setup();
  await using _ = fx;
  const before = fx.store.allMessages(fx.sessionId);
  acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: currentProcess(),
    now: clock.now() + TTL,
    ttlMs: TTL,
  });
  const result = commitCompaction(fx.store, request);
  assert.match(!result.committed ? result.reason : "", /^the lease was taken over by pid \d+ on /);
  assert.deepEqual(fx.store.allMessages(fx.sessionId), before);
});

Deno.test("commit: a released lease writes nothing", async () => {
  const { fx, request } = await setup();
  await using _ = fx;
  fx.store.db.exec("DELETE FROM compaction_leases");
  const result = commitCompaction(fx.store, request);
  assert.match(!result.committed ? result.reason : "", /released or reclaimed/);
  assert.equal(logCount(fx), 0);
});

Deno.test("commit: rows that are no longer active roll the whole commit back", async () => {
  const { fx, middle, request } = await setup();
  await using _ = fx;
  fx.store.db.prepare("UPDATE messages SET active = 0 WHERE id = ?").run(middle[2]!.id);
  const before = fx.store.allMessages(fx.sessionId);
  const result = commitCompaction(fx.store, request);
  assert.equal(result.committed, false);
  assert.match(!result.committed ? result.reason : "", /changed while the compaction ran/);
  assert.deepEqual(fx.store.allMessages(fx.sessionId), before);
  assert.equal(logCount(fx), 0, "the log row inserted before the check is rolled back");
});
