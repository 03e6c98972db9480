/** Contract: per-session key/value state and per-plugin state. */
import assert from "node:assert/strict";
import type { OpenStore } from "./_testing.ts";

export function stateContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: per-session state round-trips, is per session, and is deleted`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const t = await fx.store.createSession({ job: "j" });
    assert.equal(await fx.store.getState(s.id, "loop"), undefined);
    await fx.store.setState(s.id, "loop", { tick: 2 });
    assert.deepEqual(await fx.store.getState(s.id, "loop"), { tick: 2 });
    await fx.store.setState(s.id, "loop", { tick: 3 });
    assert.deepEqual(await fx.store.getState(s.id, "loop"), { tick: 3 });
    assert.equal(await fx.store.getState(t.id, "loop"), undefined, "another session has its own state");
    await fx.store.setState(s.id, "flag", null);
    assert.equal(await fx.store.getState(s.id, "flag"), null, "a stored null is not a missing key");
    await fx.store.deleteState(s.id, "loop");
    assert.equal(await fx.store.getState(s.id, "loop"), undefined);
    await fx.store.deleteState(s.id, "never-set");
  });

  Deno.test(`${name}: a session's state goes with the session`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    await fx.store.setState(s.id, "heartbeat", { status: "active" });
    await fx.store.deleteSessions([s.id]);
    assert.equal(await fx.store.getState(s.id, "heartbeat"), undefined);
  });

  Deno.test(`${name}: plugin state is JSON per plugin: get, set, delete, keys by prefix`, async () => {
    await using fx = await open();
    const other = await fx.connect();
    const { store } = fx;
    assert.equal(await store.getPluginState("one", "a"), undefined);
    await store.setPluginState("one", "a", { v: 1 });
    await store.setPluginState("one", "b:2", [1, "two"]);
    await store.setPluginState("one", "b:1", null);
    await store.setPluginState("two", "b:9", true);
    assert.deepEqual(await other.getPluginState("one", "a"), { v: 1 });
    assert.equal(await store.getPluginState("one", "b:1"), null, "a stored null is not a missing key");
    await store.setPluginState("one", "a", "replaced");
    assert.equal(await store.getPluginState("one", "a"), "replaced");
    assert.deepEqual(await store.pluginStateKeys("one", ""), ["a", "b:1", "b:2"]);
    assert.deepEqual(await store.pluginStateKeys("one", "b:"), ["b:1", "b:2"]);
    assert.deepEqual(await store.pluginStateKeys("two", ""), ["b:9"]);
    assert.deepEqual(await store.pluginStateKeys("three", ""), []);
    assert.equal(await store.deletePluginState("one", "a"), true);
    assert.equal(await store.deletePluginState("one", "a"), false, "already gone");
    assert.equal(await store.getPluginState("one", "a"), undefined);
    assert.deepEqual(await store.getPluginState("two", "b:9"), true);
  });
}
