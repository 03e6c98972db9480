/** Contract: step records — started and restarted (attempts), sent once with their user row, finished. */
import assert from "node:assert/strict";
import { type OpenStore, SetClock } from "./_testing.ts";

export function stepContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: a step is started, restarted with the next attempt, and finished; a done step stays done`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const s = await fx.store.createSession({ job: "j" });
    const first = await fx.store.startStep(s.id, { step: 1, input: "one" });
    assert.deepEqual(first, {
      session_id: s.id,
      step: 1,
      input: "one",
      attempt: 1,
      message_seq: null,
      status: "started",
      started_at: clock.at,
      updated_at: clock.at,
    });
    clock.at += 10;
    const again = await fx.store.startStep(s.id, { step: 1, input: "one" });
    assert.deepEqual([again.attempt, again.started_at, again.updated_at], [2, first.started_at, clock.at]);
    await fx.store.finishStep(s.id, 1);
    const done = await fx.store.startStep(s.id, { step: 1, input: "one" });
    assert.deepEqual([done.status, done.attempt], ["done", 2], "a done step is not started again");
    await fx.store.startStep(s.id, { step: 2, input: "two" });
    assert.deepEqual((await fx.store.sessionSteps(s.id)).map((r) => [r.step, r.status]), [
      [1, "done"],
      [2, "started"],
    ]);
    assert.deepEqual(await fx.store.sessionSteps("missing"), []);
  });

  Deno.test(`${name}: sendStep appends the step's user row once, recording its seq, from any connection`, async () => {
    await using fx = await open();
    const other = await fx.connect();
    const s = await fx.store.createSession({ job: "j" });
    await fx.store.appendMessages(s.id, [{ role: "system", content: "sys" }]);
    await fx.store.startStep(s.id, { step: 1, input: "hello" });
    const sent = await fx.store.sendStep(s.id, 1, { role: "user", content: "hello" });
    assert.ok(sent);
    assert.deepEqual([sent.role, sent.content, sent.seq, sent.active], ["user", "hello", 2, true]);
    assert.equal((await fx.store.sessionSteps(s.id))[0]!.message_seq, 2);
    assert.deepEqual(sent, (await fx.store.allMessages(s.id)).at(-1), "the row as stored");
    // A run that starts the step again (after a kill) finds it sent: nothing is appended twice.
    await other.startStep(s.id, { step: 1, input: "hello" });
    assert.equal(await other.sendStep(s.id, 1, { role: "user", content: "hello" }), null);
    assert.deepEqual((await fx.store.allMessages(s.id)).map((m) => m.content), ["sys", "hello"]);
    // Sent concurrently from two connections: one row.
    await fx.store.startStep(s.id, { step: 2, input: "twice" });
    const both = await Promise.all([
      fx.store.sendStep(s.id, 2, { role: "user", content: "twice" }),
      other.sendStep(s.id, 2, { role: "user", content: "twice" }),
    ]);
    assert.equal(both.filter((m) => m !== null).length, 1);
    assert.deepEqual((await fx.store.allMessages(s.id)).map((m) => m.content), ["sys", "hello", "twice"]);
    await assert.rejects(
      fx.store.sendStep(s.id, 9, { role: "user", content: "never started" }),
      /Cannot send step 9 of session .*: it was never started/,
    );
    assert.equal((await fx.store.allMessages(s.id)).length, 3, "a refused send appends nothing");
  });

  Deno.test(`${name}: deleting a session deletes its steps`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j", status: "success" });
    await fx.store.startStep(s.id, { step: 1, input: "x" });
    await fx.store.deleteSessions([s.id]);
    assert.deepEqual(await fx.store.sessionSteps(s.id), []);
  });
}
