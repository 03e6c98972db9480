/**
 * Contract: API tokens (and the run counts `/metrics` reads). The store keeps the hash it is given and never a secret; a revoke is seen at once by
 * another connection; revoking twice keeps the first time.
 */
import assert from "node:assert/strict";
import type { OpenStore } from "./_testing.ts";

export function tokenContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: tokens: created, listed, found by id with their hash, revoked for every connection`, async () => {
    await using fx = await open();
    const { store } = fx;
    const made = await store.createToken({
      id: "t1",
      name: "ci",
      hash: "ab".repeat(32),
      scopes: ["runs:read", "runs:write"],
      expires_at: 5_000,
      now: 1_000,
    });
    assert.deepEqual(made, {
      id: "t1",
      name: "ci",
      scopes: ["runs:read", "runs:write"],
      created_at: 1_000,
      expires_at: 5_000,
      revoked_at: null,
    });
    await store.createToken({
      id: "t2",
      name: null,
      hash: "cd".repeat(32),
      scopes: ["admin"],
      expires_at: null,
      now: 2_000,
    });
    assert.equal(Object.hasOwn((await store.listTokens())[0]!, "hash"), false);
    assert.deepEqual((await store.listTokens()).map((t) => t.id), ["t1", "t2"]);
    const other = await fx.connect();
    assert.equal((await other.tokenById("t1"))?.hash, "ab".repeat(32));
    assert.equal(await other.tokenById("nope"), undefined);
    await assert.rejects(
      store.createToken({ id: "t1", name: null, hash: "x", scopes: [], expires_at: null, now: 3 }),
    );

    assert.equal((await store.revokeToken("t1", 3_000))?.revoked_at, 3_000);
    assert.equal((await other.tokenById("t1"))?.revoked_at, 3_000);
    assert.equal((await store.revokeToken("t1", 4_000))?.revoked_at, 3_000);
    assert.equal(await store.revokeToken("nope", 4_000), undefined);
    assert.equal((await other.tokenById("t2"))?.revoked_at, null);
  });
}

export function serverSecretContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: serverSecret: the first value stored under a name is every connection's, for good`, async () => {
    await using fx = await open();
    const { store } = fx;
    const other = await fx.connect();
    const [a, b] = await Promise.all([
      store.serverSecret("console", "aa".repeat(32), 1_000),
      other.serverSecret("console", "bb".repeat(32), 1_000),
    ]);
    assert.equal(a, b);
    assert.ok(a === "aa".repeat(32) || a === "bb".repeat(32));
    assert.equal(await store.serverSecret("console", "cc".repeat(32), 2_000), a);
    assert.equal(await store.serverSecret("other", "dd".repeat(32), 2_000), "dd".repeat(32));
  });
}

export function runCountContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: runCounts counts runs by status`, async () => {
    await using fx = await open();
    const { store } = fx;
    assert.deepEqual(await store.runCounts(), {});
    const run = { job: "j", job_path: null, job_snapshot: "{}", inputs: {}, now: 1_000 };
    const first = await store.submitRun(run);
    await store.submitRun(run);
    await store.cancelRun(first.run.id, 2_000);
    assert.deepEqual(await (await fx.connect()).runCounts(), { queued: 1, cancelled: 1 });
  });
}
