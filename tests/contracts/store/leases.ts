/**
 * Contract: compaction leases. Taken only when free, expired, or held by a provably dead process on this host;
 * refresh and release are holder-qualified.
 */
import assert from "node:assert/strict";
import { processStartTime } from "../../../runtime/core/process_identity.ts";
import { deadHolder, liveHolder, type OpenStore } from "./_testing.ts";

const TTL = 60_000;
const NOW = Date.UTC(2026, 0, 1);

export function leaseContract(name: string, open: OpenStore): void {
  const session = async () => {
    const fx = await open();
    const sessionId = (await fx.store.createSession({ job: "j" })).id;
    const acquire = (holder = liveHolder(), now = NOW) =>
      fx.store.acquireLease({ sessionId, holder, now, ttlMs: TTL });
    return { fx, store: fx.store, sessionId, acquire };
  };

  Deno.test(`${name}: a free lease is acquired and records its holder`, async () => {
    const { fx, store, sessionId, acquire } = await session();
    await using _ = fx;
    const me = liveHolder();
    assert.equal(await store.readLease(sessionId), undefined);
    assert.deepEqual(await acquire(me), {
      acquired: true,
      lease: { session_id: sessionId, holder: me, acquired_at: NOW, expires_at: NOW + TTL },
    });
    assert.deepEqual(await store.readLease(sessionId), {
      session_id: sessionId,
      holder: me,
      acquired_at: NOW,
      expires_at: NOW + TTL,
    });
  });

  Deno.test(`${name}: a second holder is refused while the first is alive and unexpired`, async () => {
    const { fx, store, sessionId, acquire } = await session();
    await using _ = fx;
    const other = await fx.connect();
    const first = liveHolder();
    await acquire(first);
    const second = await other.acquireLease({ sessionId, holder: liveHolder(), now: NOW, ttlMs: TTL });
    assert.equal(second.acquired, false);
    assert.equal(second.acquired === false && second.current.holder.nonce, first.nonce);
    assert.equal((await store.readLease(sessionId))?.holder.nonce, first.nonce);
  });

  Deno.test(`${name}: an expired lease is taken over, one that is not yet expired is not`, async () => {
    const { fx, store, sessionId, acquire } = await session();
    await using _ = fx;
    await acquire();
    assert.equal((await acquire(liveHolder(), NOW + TTL - 1)).acquired, false);
    const late = liveHolder();
    const result = await acquire(late, NOW + TTL);
    assert.equal(result.acquired && result.took_over, "expired");
    assert.equal((await store.readLease(sessionId))?.holder.nonce, late.nonce);
  });

  Deno.test(`${name}: a holder whose process is dead is taken over before expiry`, async () => {
    const { fx, acquire } = await session();
    await using _ = fx;
    await acquire(await deadHolder());
    const result = await acquire();
    assert.equal(result.acquired, true);
    assert.equal(result.acquired && result.took_over, "dead_holder");
  });

  Deno.test(`${name}: a live foreign holder keeps its lease; once it dies it is taken over`, async () => {
    const { fx, store, sessionId, acquire } = await session();
    await using _ = fx;
    const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" }).spawn();
    try {
      await acquire(liveHolder({ pid: child.pid, started: processStartTime(child.pid)! }));
      assert.equal((await acquire()).acquired, false);
      assert.equal((await store.readLease(sessionId))?.holder.pid, child.pid);
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
    const reclaimed = await acquire();
    assert.equal(reclaimed.acquired && reclaimed.took_over, "dead_holder");
  });

  Deno.test(`${name}: a recycled pid (same pid, another start time) is taken over`, async () => {
    const { fx, acquire } = await session();
    await using _ = fx;
    await acquire(liveHolder({ pid: Deno.pid, started: String(Number(processStartTime(Deno.pid)) - 100) }));
    const result = await acquire();
    assert.equal(result.acquired && result.took_over, "dead_holder");
  });

  Deno.test(`${name}: a holder on another host is never presumed dead, only expired`, async () => {
    const { fx, acquire } = await session();
    await using _ = fx;
    await acquire({ ...(await deadHolder()), host: `${Deno.hostname()}-elsewhere` });
    assert.equal((await acquire()).acquired, false);
    assert.equal((await acquire(liveHolder(), NOW + TTL)).acquired, true);
  });

  Deno.test(`${name}: "this host" is the one the store is opened for, not the machine's hostname`, async () => {
    await using fx = await open({ host: "hermes-test-host-a" });
    const now = Date.now(); // findBusySessions judges expiry by the store's clock
    const sessionId = (await fx.store.createSession({ job: "j" })).id;
    const acquire = (holder = liveHolder({ host: "hermes-test-host-a" })) =>
      fx.store.acquireLease({ sessionId, holder, now, ttlMs: TTL });
    const dead = await deadHolder();
    await acquire(dead);
    assert.equal((await acquire()).acquired, false, "a dead holder named by the hostname is another host's");
    assert.deepEqual(await fx.store.findBusySessions([sessionId]), [{
      id: sessionId,
      reason: `compacting in pid ${dead.pid} on ${dead.host}, lease until ${
        new Date(now + TTL).toISOString()
      }`,
    }]);
    const other = (await fx.store.createSession({ job: "j" })).id;
    await fx.store.acquireLease({
      sessionId: other,
      holder: { ...dead, host: "hermes-test-host-a" },
      now,
      ttlMs: TTL,
    });
    const taken = await fx.store.acquireLease({
      sessionId: other,
      holder: liveHolder({ host: "hermes-test-host-a" }),
      now,
      ttlMs: TTL,
    });
    assert.equal(
      taken.acquired && taken.took_over,
      "dead_holder",
      "one named as the store's host is provably dead",
    );
  });

  Deno.test(`${name}: a stale holder can neither release nor refresh the new holder's lease`, async () => {
    const { fx, store, sessionId, acquire } = await session();
    await using _ = fx;
    const [stale, fresh] = [liveHolder(), liveHolder()];
    await acquire(stale);
    const later = NOW + TTL;
    await acquire(fresh, later);
    assert.equal(await store.releaseLease({ sessionId, nonce: stale.nonce }), false);
    assert.equal(await store.refreshLease({ sessionId, nonce: stale.nonce, now: later, ttlMs: TTL }), false);
    assert.equal((await store.readLease(sessionId))?.holder.nonce, fresh.nonce);
    assert.equal((await store.readLease(sessionId))?.expires_at, later + TTL);
    // The rightful holder can do both.
    assert.equal(
      await store.refreshLease({ sessionId, nonce: fresh.nonce, now: later + 10, ttlMs: TTL }),
      true,
    );
    assert.equal((await store.readLease(sessionId))?.expires_at, later + 10 + TTL);
    assert.equal(await store.releaseLease({ sessionId, nonce: fresh.nonce }), true);
    assert.equal(await store.readLease(sessionId), undefined);
    assert.equal(await store.releaseLease({ sessionId, nonce: fresh.nonce }), false, "released once");
  });

  Deno.test(`${name}: an expired lease cannot be refreshed back to life`, async () => {
    const { fx, store, sessionId, acquire } = await session();
    await using _ = fx;
    const me = liveHolder();
    await acquire(me);
    assert.equal(await store.refreshLease({ sessionId, nonce: me.nonce, now: NOW + TTL, ttlMs: TTL }), false);
    assert.equal(
      await store.refreshLease({ sessionId, nonce: me.nonce, now: NOW + TTL - 1, ttlMs: TTL }),
      true,
    );
  });

  Deno.test(`${name}: a lease goes with its session`, async () => {
    const { fx, store, sessionId, acquire } = await session();
    await using _ = fx;
    await acquire(await deadHolder());
    await store.deleteSessions([sessionId]);
    assert.equal(await store.readLease(sessionId), undefined);
  });
}
