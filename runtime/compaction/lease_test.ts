import assert from "node:assert/strict";
import { ManualClock } from "../core/clock.ts";
import { currentProcess, type ProcessIdentity, processStartTime } from "../core/process_identity.ts";
import { fixture, linesOf, TESTDATA, waitForLine } from "./_testing.ts";
import { acquireLease, keepLease, readLease, refreshLease, releaseLease } from "./lease.ts";

const TTL = 60_000;

function holder(overrides: Partial<ProcessIdentity> = {}): ProcessIdentity {
  return { ...currentProcess(), ...overrides };
}

/** A real process that has exited: its pid is gone. */
async function deadProcess(): Promise<{ pid: number; started: string }> {
  const child = new Deno.Command("sleep", { args: ["0.1"], stdout: "null", stderr: "null" }).spawn();
  const started = processStartTime(child.pid);
  assert.ok(started, "the child's start time is readable while it runs");
  await child.status;
  return { pid: child.pid, started };
}

Deno.test("lease: a free lease is acquired and records its holder", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const me = holder();
  const result = acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: me,
    now: clock.now(),
    ttlMs: TTL,
  });
  assert.equal(result.acquired, true);
  assert.deepEqual(readLease(fx.store, fx.sessionId), {
    session_id: fx.sessionId,
    holder: me,
    acquired_at: clock.now(),
    expires_at: clock.now() + TTL,
  });
});

Deno.test("lease: a second holder is refused while the first is alive and unexpired", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const first = holder();
  acquireLease(fx.store, { sessionId: fx.sessionId, holder: first, now: clock.now(), ttlMs: TTL });
  const second = acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: holder(),
    now: clock.now(),
    ttlMs: TTL,
  });
  assert.equal(second.acquired, false);
  assert.equal(second.acquired === false && second.current.holder.nonce, first.nonce);
  assert.equal(readLease(fx.store, fx.sessionId)?.holder.nonce, first.nonce);
});

Deno.test("lease: an expired lease is reclaimable, one that is not yet expired is not", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  acquireLease(fx.store, { sessionId: fx.sessionId, holder: holder(), now: clock.now(), ttlMs: TTL });
  const early = acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: holder(),
    now: clock.now() + TTL - 1,
    ttlMs: TTL,
  });
  assert.equal(early.acquired, false);
  const late = holder();
  const result = acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: late,
    now: clock.now() + TTL,
    ttlMs: TTL,
  });
  assert.equal(result.acquired, true);
  assert.equal(result.acquired && result.took_over, "expired");
  assert.equal(readLease(fx.store, fx.sessionId)?.holder.nonce, late.nonce);
});

Deno.test("lease: a holder whose pid is dead is reclaimed before expiry", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const dead = await deadProcess();
  acquireLease(fx.store, { sessionId: fx.sessionId, holder: holder(dead), now: clock.now(), ttlMs: TTL });
  const result = acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: holder(),
    now: clock.now(),
    ttlMs: TTL,
  });
  assert.equal(result.acquired, true);
  assert.equal(result.acquired && result.took_over, "dead_holder");
});

Deno.test("lease: a live foreign holder is kept; once it dies its lease is reclaimed", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" }).spawn();
  try {
    const foreign = holder({ pid: child.pid, started: processStartTime(child.pid)! });
    acquireLease(fx.store, { sessionId: fx.sessionId, holder: foreign, now: clock.now(), ttlMs: TTL });
    const refused = acquireLease(fx.store, {
      sessionId: fx.sessionId,
      holder: holder(),
      now: clock.now(),
      ttlMs: TTL,
    });
    assert.equal(refused.acquired, false);
    assert.equal(readLease(fx.store, fx.sessionId)?.holder.pid, child.pid);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  const reclaimed = acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: holder(),
    now: clock.now(),
    ttlMs: TTL,
  });
  assert.equal(reclaimed.acquired && reclaimed.took_over, "dead_holder");
});

Deno.test("lease: a recycled pid (same pid, other start time) is reclaimed", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const recycled = holder({ pid: Deno.pid, started: String(Number(processStartTime(Deno.pid)) - 100) });
  acquireLease(fx.store, { sessionId: fx.sessionId, holder: recycled, now: clock.now(), ttlMs: TTL });
  const result = acquireLease(fx.store, {
    sessionId: fx.sessionId,
    holder: holder(),
    now: clock.now(),
    ttlMs: TTL,
  });
  assert.equal(result.acquired && result.took_over, "dead_holder");
});

Deno.test("lease: a holder on another host is never presumed dead, only expired", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const dead = await deadProcess();
  const remote = holder({ ...dead, host: `${Deno.hostname()}-elsewhere` });
  acquireLease(fx.store, { sessionId: fx.sessionId, holder: remote, now: clock.now(), ttlMs: TTL });
  assert.equal(
    acquireLease(fx.store, { sessionId: fx.sessionId, holder: holder(), now: clock.now(), ttlMs: TTL })
      .acquired,
    false,
  );
  assert.equal(
    acquireLease(fx.store, { sessionId: fx.sessionId, holder: holder(), now: clock.now() + TTL, ttlMs: TTL })
      .acquired,
    true,
  );
});

Deno.test("lease: a stale holder can neither release nor refresh the new holder's lease", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const stale = holder();
  const fresh = holder();
  const sessionId = fx.sessionId;
  acquireLease(fx.store, { sessionId, holder: stale, now: clock.now(), ttlMs: TTL });
  await clock.advance(TTL);
  acquireLease(fx.store, { sessionId, holder: fresh, now: clock.now(), ttlMs: TTL });
  assert.equal(releaseLease(fx.store, { sessionId, nonce: stale.nonce }), false);
  assert.equal(
    refreshLease(fx.store, { sessionId, nonce: stale.nonce, now: clock.now(), ttlMs: TTL }),
    false,
  );
  assert.equal(readLease(fx.store, sessionId)?.holder.nonce, fresh.nonce);
  assert.equal(readLease(fx.store, sessionId)?.expires_at, clock.now() + TTL);
  // The rightful holder can do both.
  assert.equal(
    refreshLease(fx.store, { sessionId, nonce: fresh.nonce, now: clock.now() + 10, ttlMs: TTL }),
    true,
  );
  assert.equal(readLease(fx.store, sessionId)?.expires_at, clock.now() + 10 + TTL);
  assert.equal(releaseLease(fx.store, { sessionId, nonce: fresh.nonce }), true);
  assert.equal(readLease(fx.store, sessionId), undefined);
});

Deno.test("lease: an expired lease cannot be refreshed back to life", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const me = holder();
  acquireLease(fx.store, { sessionId: fx.sessionId, holder: me, now: clock.now(), ttlMs: TTL });
  assert.equal(
    refreshLease(fx.store, { sessionId: fx.sessionId, nonce: me.nonce, now: clock.now() + TTL, ttlMs: TTL }),
    false,
  );
});

Deno.test("lease: keepLease refreshes every third of the TTL and reports a lost lease", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const me = holder();
  const sessionId = fx.sessionId;
  acquireLease(fx.store, { sessionId, holder: me, now: clock.now(), ttlMs: TTL });
  const kept = keepLease(fx.store, { sessionId, nonce: me.nonce, ttlMs: TTL, clock });
  await clock.advance(TTL / 3);
  await tick();
  assert.equal(readLease(fx.store, sessionId)?.expires_at, clock.now() + TTL);
  assert.equal(kept.lost.aborted, false);
  // Another process takes the row over (as it would after judging us dead).
  fx.store.db.prepare("UPDATE compaction_leases SET holder_nonce = 'thief' WHERE session_id = ?").run(
    sessionId,
  );
  await clock.advance(TTL / 3);
  await tick();
  assert.equal(kept.lost.aborted, true);
  assert.match(String(kept.lost.reason), /lease lost: the lease was taken over by pid/);
  await kept.stop();
});

Deno.test("lease: of 8 processes racing for one lease exactly one wins", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const children = Array.from({ length: 8 }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${TESTDATA}acquire_lease.ts`, fx.path, fx.sessionId],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn());
  const lines = children.map((c) => linesOf(c.stdout));
  const writers = children.map((c) => c.stdin.getWriter());
  try {
    await Promise.all(lines.map((l) => waitForLine(l, (line) => line === "ready")));
    const go = new TextEncoder().encode("go\n");
    await Promise.all(writers.map((w) => w.write(go)));
    const results = await Promise.all(
      lines.map(async (l) =>
        JSON.parse(await waitForLine(l, (line) => line.startsWith("{"))) as { acquired: boolean }
      ),
    );
    assert.equal(results.filter((r) => r.acquired).length, 1, JSON.stringify(results));
    const winner = children[results.findIndex((r) => r.acquired)]!;
    assert.equal(readLease(fx.store, fx.sessionId)?.holder.pid, winner.pid);
  } finally {
    await Promise.all(writers.map((w) => w.close()));
    for (const l of lines) while (!(await l.next()).done) { /* drain */ }
    await Promise.all(children.map((c) => c.status));
  }
});

/** Lets the refresher run after the clock wakes it. */
function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
