/** Contract: sessions are created, read, resolved, updated, counted and adopted. */
import assert from "node:assert/strict";
import { NotFoundError } from "../../../runtime/core/errors.ts";
import { deadHolder, liveHolder, type OpenStore, ownedBy, SetClock } from "./_testing.ts";

export function sessionContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: sessions are created with defaults, read back and updated`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const a = await fx.store.createSession({ job: "a", model: "m", config_json: '{"x":1}' });
    assert.equal(a.status, "running");
    assert.equal(a.created_at, clock.at);
    assert.deepEqual(await fx.store.getSession(a.id), a);
    const b = await fx.store.createSession({ job: "b", parent_id: a.id, status: "idle", id: "fixed-id" });
    assert.equal(b.id, "fixed-id");
    assert.equal(b.parent_id, a.id);
    clock.at += 1000;
    await fx.store.updateSession(a.id, {
      status: "success",
      terminal_reason: "completed",
      ended_at: clock.at,
    });
    const updated = (await fx.store.getSession(a.id))!;
    assert.deepEqual(
      [updated.status, updated.terminal_reason, updated.ended_at, updated.updated_at, updated.created_at],
      ["success", "completed", clock.at, clock.at, a.created_at],
    );
    assert.equal(await fx.store.getSession("missing"), undefined);
  });

  Deno.test(`${name}: a session created with its owner is owned from its first row`, async () => {
    await using fx = await open();
    const owner = { host: "h1", pid: 4242, started: "123" };
    const owned = await fx.store.createSession({ job: "j", owner });
    assert.deepEqual(
      [owned.owner_host, owned.owner_pid, owned.owner_started],
      [owner.host, owner.pid, owner.started],
    );
    const unowned = await fx.store.createSession({ job: "j" });
    assert.deepEqual([unowned.owner_host, unowned.owner_pid, unowned.owner_started], [null, null, null]);
  });

  Deno.test(`${name}: resolveSessionId takes an id, a unique prefix or latest`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const a = await fx.store.createSession({ job: "a", id: "20260101-000000-aaaaaa" });
    clock.at += 1;
    const b = await fx.store.createSession({ job: "b", id: "20260101-000000-aabbbb" });
    assert.equal(await fx.store.resolveSessionId("latest"), b.id);
    assert.equal(await fx.store.resolveSessionId(a.id), a.id);
    assert.equal(await fx.store.resolveSessionId("20260101-000000-aab"), b.id);
    await assert.rejects(fx.store.resolveSessionId("20260101-000000-aa"), NotFoundError, "ambiguous");
    await assert.rejects(fx.store.resolveSessionId("nope"), NotFoundError);
    await fx.store.archiveSessions([b.id]);
    assert.equal(await fx.store.resolveSessionId("latest"), a.id, "latest skips archived sessions");
  });

  Deno.test(`${name}: resolveSessionId on an empty store names "latest"`, async () => {
    await using fx = await open();
    await assert.rejects(
      fx.store.resolveSessionId("latest"),
      (e: Error) => e instanceof NotFoundError && /"latest"/.test(e.message),
    );
  });

  Deno.test(`${name}: resolveSessionIds resolves all or names every problem`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    await fx.store.createSession({ job: "a", id: "20260101-000000-aaaaaa" });
    clock.at += 1;
    await fx.store.createSession({ job: "b", id: "20260101-000000-aabbbb" });
    clock.at += 1;
    await fx.store.createSession({ job: "c", id: "20260101-000000-aacccc" });
    assert.deepEqual(
      await fx.store.resolveSessionIds(["20260101-000000-aab", "latest", "20260101-000000-aabbbb"], {
        action: "show sessions",
      }),
      ["20260101-000000-aabbbb", "20260101-000000-aacccc"],
      "duplicates are returned once, in first-mention order",
    );
    await assert.rejects(
      fx.store.resolveSessionIds(["nope", "20260101-000000-aa", "latest"], {
        action: "delete sessions",
        mutating: true,
      }),
      (error: Error) => {
        assert.ok(error instanceof NotFoundError);
        assert.equal(
          error.message,
          `Cannot delete sessions: unknown session id "nope", ambiguous session id prefix "20260101-000000-aa" ` +
            `(matches 20260101-000000-aaaaaa, 20260101-000000-aabbbb, 20260101-000000-aacccc, …); nothing was changed`,
        );
        return true;
      },
    );
    await assert.rejects(
      fx.store.resolveSessionIds([""], { action: "show session" }),
      /unknown session id ""$/,
    );
  });

  Deno.test(`${name}: addUsage sums cache writes, reasoning and cost; unpriced calls are counted apart`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    await fx.store.addUsage(s.id, {
      turns: 1,
      prompt_tokens: 100,
      completion_tokens: 40,
      cached_tokens: 10,
      cache_write_tokens: 70,
      reasoning_tokens: 30,
      cost_usd: 0.25,
    });
    await fx.store.addUsage(s.id, { turns: 2, prompt_tokens: 5, completion_tokens: 5, cost_usd: 0.5 });
    await fx.store.addUsage(s.id, { turns: 3, prompt_tokens: 1, completion_tokens: 1, cost_usd: null });
    const row = (await fx.store.getSession(s.id))!;
    assert.deepEqual(
      [row.turns, row.cache_write_tokens, row.reasoning_tokens, row.cost_usd, row.unpriced_calls],
      [6, 70, 30, 0.75, 3],
    );
  });

  Deno.test(`${name}: jobSpend sums a job's priced calls from a time on, across sessions, kept after delete`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const a = await fx.store.createSession({ job: "nightly" });
    const b = await fx.store.createSession({ job: "nightly" });
    const other = await fx.store.createSession({ job: "other" });
    await fx.store.addUsage(a.id, { turns: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: 1.5 });
    clock.at += 1000;
    const since = clock.at;
    await fx.store.addUsage(a.id, { turns: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.25 });
    await fx.store.addUsage(b.id, { turns: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.5 });
    await fx.store.addUsage(b.id, { turns: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: null });
    await fx.store.addUsage(other.id, { turns: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: 9 });
    assert.equal(await fx.store.jobSpend("nightly", since), 0.75);
    assert.equal(await fx.store.jobSpend("nightly", since - 1000), 2.25);
    assert.equal(await fx.store.jobSpend("nightly", clock.at + 1), 0);
    assert.equal(await fx.store.jobSpend("nobody", 0), 0);
    await fx.store.deleteSessions([b.id]);
    assert.equal(await fx.store.jobSpend("nightly", since), 0.75, "money spent stays spent");
  });

  Deno.test(`${name}: resolveSessionIds on an empty store explains "latest"`, async () => {
    await using fx = await open();
    await assert.rejects(
      fx.store.resolveSessionIds(["latest"], { action: "show session" }),
      /no session "latest": the store has no unarchived sessions/,
    );
  });

  Deno.test(`${name}: addUsage adds to the session's totals`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const s = await fx.store.createSession({ job: "j" });
    assert.equal(s.cached_tokens, 0);
    await fx.store.addUsage(s.id, { turns: 2, prompt_tokens: 100, completion_tokens: 10, cached_tokens: 60 });
    clock.at += 5;
    await fx.store.addUsage(s.id, { turns: 1, prompt_tokens: 50, completion_tokens: 5 });
    const row = (await fx.store.getSession(s.id))!;
    assert.deepEqual(
      [row.turns, row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.updated_at],
      [
        3,
        150,
        15,
        60,
        clock.at,
      ],
    );
  });

  Deno.test(`${name}: adoptSession is a compare-and-set on the owner: one adopter wins`, async () => {
    await using fx = await open();
    const other = await fx.connect();
    const s = await fx.store.createSession({ job: "j" });
    const dead = await deadHolder();
    await fx.store.updateSession(s.id, ownedBy(dead));
    const expected = ownedBy(dead);
    const [first, second] = [liveHolder(), liveHolder()];
    assert.equal(await fx.store.adoptSession(s.id, { expected, holder: first }), true);
    assert.equal(await other.adoptSession(s.id, { expected, holder: second }), false, "the owner changed");
    const row = (await fx.store.getSession(s.id))!;
    assert.deepEqual([row.owner_host, row.owner_pid, row.owner_started], [
      first.host,
      first.pid,
      first.started,
    ]);
    const none = { owner_host: null, owner_pid: null, owner_started: null };
    const unowned = await fx.store.createSession({ job: "j" });
    assert.equal(await fx.store.adoptSession(unowned.id, { expected: none, holder: first }), true);
  });

  Deno.test(`${name}: claimSession takes a session nobody live owns and refuses one a live process owns`, async () => {
    await using fx = await open();
    const other = await fx.connect();
    // A holder on another host is never provably dead: it stands for a live process elsewhere.
    const [a, b] = [liveHolder({ host: "host-a" }), liveHolder({ host: "host-b" })];
    const s = await fx.store.createSession({ job: "j" });
    assert.deepEqual(await fx.store.claimSession(s.id, a), { claimed: true });
    assert.deepEqual(await fx.store.claimSession(s.id, a), { claimed: true }, "the owner may claim again");
    const refused = await other.claimSession(s.id, b);
    assert.equal(refused.claimed, false);
    assert.deepEqual(!refused.claimed && [refused.owner.host, refused.owner.pid], ["host-a", a.pid]);
    assert.equal((await fx.store.getSession(s.id))!.owner_host, "host-a", "a refusal changes nothing");
    // A run that ends clears its owner: then anyone may claim it; a provably dead owner left it too.
    await fx.store.updateSession(s.id, { status: "success", owner_pid: null });
    assert.deepEqual(await other.claimSession(s.id, b), { claimed: true });
    const orphan = await fx.store.createSession({ job: "j" });
    await fx.store.updateSession(orphan.id, ownedBy(await deadHolder()));
    assert.deepEqual(await other.claimSession(orphan.id, b), { claimed: true });
    // Two processes claiming at once: exactly one wins.
    const raced = await fx.store.createSession({ job: "j" });
    const results = await Promise.all([fx.store.claimSession(raced.id, a), other.claimSession(raced.id, b)]);
    assert.equal(results.filter((r) => r.claimed).length, 1);
    await assert.rejects(fx.store.claimSession("missing", a), NotFoundError);
  });

  Deno.test(`${name}: renewOwner: a live owner whose renewal is overdue is stalled and may be taken over`, async () => {
    const clock = new SetClock(1_000_000);
    await using fx = await open({ clock });
    const other = await fx.connect();
    const [a, b] = [liveHolder({ host: "host-a" }), liveHolder({ host: "host-b" })];
    const s = await fx.store.createSession({ job: "j" });
    assert.deepEqual(await fx.store.claimSession(s.id, a), { claimed: true });
    assert.equal(await fx.store.renewOwner(s.id, a, clock.at + 30_000), true);
    assert.equal(await other.renewOwner(s.id, b, clock.at + 30_000), false, "only the owner renews");
    // Within the renewal the live owner keeps the session; past it, it is stalled, however alive its pid.
    clock.at += 30_000;
    assert.equal((await other.claimSession(s.id, b)).claimed, false, "not before the expiry has passed");
    clock.at += 1;
    assert.deepEqual(await other.claimSession(s.id, b), { claimed: true });
    // The stalled owner learns it lost the session at its next renewal; the taker's expiry starts fresh.
    assert.equal(await fx.store.renewOwner(s.id, a, clock.at + 30_000), false);
    assert.equal(
      (await fx.store.claimSession(s.id, a)).claimed,
      false,
      "the taker has no expiry yet: its pid holds",
    );
    assert.equal(await other.renewOwner(s.id, b, clock.at + 30_000), true);
    assert.equal((await fx.store.claimSession(s.id, a)).claimed, false);
  });

  Deno.test(`${name}: orphanedSessions includes a running session whose live owner stalled`, async () => {
    const clock = new SetClock(1_000_000);
    await using fx = await open({ clock });
    const a = liveHolder({ host: "host-a" });
    const s = await fx.store.createSession({ job: "j", status: "running" });
    await fx.store.updateSession(s.id, ownedBy(a));
    await fx.store.setState(s.id, "loop", { active: true });
    await fx.store.renewOwner(s.id, a, clock.at + 10_000);
    assert.deepEqual(await fx.store.orphanedSessions(["loop"]), []);
    clock.at += 10_001;
    assert.deepEqual((await fx.store.orphanedSessions(["loop"])).map((o) => o.id), [s.id]);
  });

  Deno.test(`${name}: claimSession is one compare-and-set whatever the status: a just-claimed finished session is refused`, async () => {
    await using fx = await open();
    const other = await fx.connect();
    const [a, b] = [liveHolder({ host: "host-a" }), liveHolder({ host: "host-b" })];
    for (const status of ["success", "failed", "interrupted", "limit", "running", "idle"] as const) {
      const s = await fx.store.createSession({ job: "j", status });
      assert.deepEqual(await fx.store.claimSession(s.id, a), { claimed: true }, `${status}: unowned is free`);
      // The claimant has not changed the status yet (it does so after the claim): still refused.
      const refused = await other.claimSession(s.id, b);
      assert.equal(refused.claimed, false, `${status}: a claimed session is refused`);
      assert.deepEqual(!refused.claimed && [refused.owner.host, refused.owner.pid], ["host-a", a.pid]);
      assert.equal((await fx.store.getSession(s.id))!.status, status, "a claim changes only the owner");
    }
  });

  Deno.test(`${name}: claimSession: of many claimants at once on many connections exactly one wins`, async () => {
    await using fx = await open();
    const stores = [fx.store, ...await Promise.all([1, 2, 3].map(() => fx.connect()))];
    for (let trial = 0; trial < 10; trial++) {
      const s = await fx.store.createSession({ job: "j", status: "success" });
      const holders = stores.map((_, i) => liveHolder({ host: `host-${i}` }));
      const results = await Promise.all(stores.map((store, i) => store.claimSession(s.id, holders[i]!)));
      const winners = results.flatMap((r, i) => r.claimed ? [i] : []);
      assert.equal(winners.length, 1, `trial ${trial}: one winner, got ${winners.length}`);
      const owner = (await fx.store.getSession(s.id))!.owner_host;
      assert.equal(owner, `host-${winners[0]}`, "the winner owns it");
      for (const r of results) if (!r.claimed) assert.equal(r.owner.host, owner, "losers name the winner");
    }
  });
}
