/**
 * Contract: workspace locks (one writer per working tree). Taken when free, by the same session again,
 * when expired, or when held by a provably dead process on this host; refused otherwise, naming the holder;
 * refresh and release are holder-qualified.
 */
import assert from "node:assert/strict";
import { deadHolder, liveHolder, type OpenStore } from "./_testing.ts";

const TTL = 60_000;
const NOW = Date.UTC(2026, 0, 1);
const TREE = "/srv/repo";

export function workspaceLockContract(name: string, open: OpenStore): void {
  const holder = () => liveHolder({ nonce: crypto.randomUUID() });

  Deno.test(`${name}: a free tree is taken; a second session is refused, named, across connections`, async () => {
    await using fx = await open();
    const other = await fx.connect();
    const first = holder();
    assert.deepEqual(
      await fx.store.acquireWorkspace({ path: TREE, sessionId: "s1", holder: first, now: NOW, ttlMs: TTL }),
      { acquired: true },
    );
    const second = await other.acquireWorkspace({
      path: TREE,
      sessionId: "s2",
      holder: holder(),
      now: NOW + 1,
      ttlMs: TTL,
    });
    assert.equal(second.acquired, false);
    if (second.acquired) return;
    assert.equal(second.current.session_id, "s1");
    assert.deepEqual(second.current.holder, first);
    assert.equal(second.current.expires_at, NOW + TTL);
    // The allowed neighbours: another tree, and the same session again (a resume).
    const elsewhere = await other.acquireWorkspace({
      path: `${TREE}-2`,
      sessionId: "s2",
      holder: holder(),
      now: NOW,
      ttlMs: TTL,
    });
    assert.equal(elsewhere.acquired, true);
    const again = await other.acquireWorkspace({
      path: TREE,
      sessionId: "s1",
      holder: holder(),
      now: NOW,
      ttlMs: TTL,
    });
    assert.deepEqual(again, { acquired: true });
  });

  Deno.test(`${name}: an expired or dead holder's tree is taken over; release frees it for its holder only`, async () => {
    await using fx = await open();
    const { store } = fx;
    const first = holder();
    await store.acquireWorkspace({ path: TREE, sessionId: "s1", holder: first, now: NOW, ttlMs: TTL });
    assert.equal(
      (await store.acquireWorkspace({
        path: TREE,
        sessionId: "s2",
        holder: holder(),
        now: NOW + TTL - 1,
        ttlMs: TTL,
      }))
        .acquired,
      false,
    );
    const late = holder();
    const expired = await store.acquireWorkspace({
      path: TREE,
      sessionId: "s2",
      holder: late,
      now: NOW + TTL,
      ttlMs: TTL,
    });
    assert.deepEqual(expired, { acquired: true, took_over: "expired" });
    // The old holder can neither refresh nor release it any more.
    assert.equal(
      await store.refreshWorkspace({ path: TREE, nonce: first.nonce, now: NOW + TTL, ttlMs: TTL }),
      false,
    );
    assert.equal(await store.releaseWorkspace({ path: TREE, nonce: first.nonce }), false);
    assert.equal(
      await store.refreshWorkspace({ path: TREE, nonce: late.nonce, now: NOW + TTL + 1, ttlMs: TTL }),
      true,
    );
    assert.equal(await store.releaseWorkspace({ path: TREE, nonce: late.nonce }), true);
    assert.deepEqual(
      await store.acquireWorkspace({
        path: TREE,
        sessionId: "s3",
        holder: await deadHolder(),
        now: NOW,
        ttlMs: TTL,
      }),
      { acquired: true },
    );
    const dead = await store.acquireWorkspace({
      path: TREE,
      sessionId: "s4",
      holder: holder(),
      now: NOW,
      ttlMs: TTL,
    });
    assert.deepEqual(dead, { acquired: true, took_over: "dead_holder" });
  });
}
