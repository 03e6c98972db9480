/**
 * Keeping a compaction lease alive, and the lease's exclusivity between real processes. Taking over, refreshing
 * and releasing are store operations, covered by the store contract (tests/contracts/store/leases.ts).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { currentProcess, type ProcessIdentity } from "../core/process_identity.ts";
import { sqliteHandle } from "../store/sqlite/_testing.ts";
import { fixture, linesOf, TESTDATA, waitForLine } from "./_testing.ts";
import { keepLease } from "./lease.ts";

const TTL = 60_000;

function holder(overrides: Partial<ProcessIdentity> = {}): ProcessIdentity {
  return { ...currentProcess(), ...overrides };
}

Deno.test("lease: keepLease refreshes every third of the TTL and reports a lost lease", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  const me = holder();
  const sessionId = fx.sessionId;
  await fx.store.acquireLease({ sessionId, holder: me, now: clock.now(), ttlMs: TTL });
  const kept = keepLease(fx.store, { sessionId, nonce: me.nonce, ttlMs: TTL, clock });
  await clock.advance(TTL / 3);
  await tick();
  assert.equal((await fx.store.readLease(sessionId))?.expires_at, clock.now() + TTL);
  assert.equal(kept.lost.aborted, false);
  // Another process takes the row over (as it would after judging us dead).
  sqliteHandle(fx.store).stmt("UPDATE compaction_leases SET holder_nonce = 'thief' WHERE session_id = ?").run(
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
    assert.equal((await fx.store.readLease(fx.sessionId))?.holder.pid, winner.pid);
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
