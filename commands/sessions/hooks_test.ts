/** The global plugins of HERMES_HOME/config.yaml hear `on_session_delete` from the real CLI, once per operation. */
import assert from "node:assert/strict";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { addSessions, tempStore } from "../../runtime/session_admin/_testing.ts";
import type { Store } from "../../runtime/store/store.ts";
import { hermes, isUserError } from "./_testing.ts";
import { withoutSandbox } from "../../tests/_testing/sandbox.ts";

const RECORDER = `export async function register(ctx) {
  await ctx.state.set("started", true);
  ctx.registerHook("on_session_delete", async (e) => {
    await ctx.state.set("calls", [...(await ctx.state.get("calls") ?? []), e]);
  });
}
`;

function pluginState(store: Store, key: string): unknown {
  const row = sqliteHandle(store).stmt(
    "SELECT value FROM plugin_state WHERE plugin LIKE 'path:%/recorder.js' AND key = ?",
  )
    .get(key);
  return row ? JSON.parse(String(row.value)) : undefined;
}

Deno.test({
  name: "sessions delete, archive and prune call on_session_delete on global plugins exactly once each",
  ignore: withoutSandbox,
}, async () => {
  await using fx = await tempStore(Date.now() - 10 * 86_400_000);
  await Deno.writeTextFile(`${fx.dir}/recorder.js`, RECORDER);
  await Deno.writeTextFile(`${fx.dir}/config.yaml`, "plugins:\n  - path: ./recorder.js\n");
  const [a, b, c, d, e] = await addSessions(fx, 5);
  const home = ["--home", fx.dir];

  const unknown = await hermes(["sessions", "delete", a!.id, "nope", ...home]);
  assert.ok(isUserError(unknown), unknown.stderr);
  assert.equal(pluginState(fx.store, "started"), undefined, "a refused operation starts no plugin");

  const deleted = await hermes(["sessions", "delete", a!.id, b!.id, ...home]);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.deepEqual(pluginState(fx.store, "calls"), [
    { session_id: a!.id, reason: "delete", deleted_ids: [a!.id, b!.id] },
  ]);

  assert.equal((await hermes(["sessions", "archive", c!.id, ...home])).code, 0);
  sqliteHandle(fx.store).stmt("UPDATE sessions SET updated_at = ? WHERE id IN (?, ?)").run(
    Date.now(),
    d!.id,
    c!.id,
  );
  const pruned = await hermes(["sessions", "prune", "--older-than", "1d", "--yes", ...home]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal(pruned.stdout, `${e!.id}\n`);
  assert.deepEqual((pluginState(fx.store, "calls") as unknown[]).slice(1), [
    { session_id: c!.id, reason: "archive", deleted_ids: [c!.id] },
    { session_id: e!.id, reason: "prune", deleted_ids: [e!.id] },
  ]);

  assert.equal((await hermes(["sessions", "delete", a!.id, ...home])).code, 2);
  assert.equal((pluginState(fx.store, "calls") as unknown[]).length, 3, "a repeated delete fires nothing");
});

Deno.test("a global plugin that cannot start: the deletion stands, the failure is reported, exit 1", async () => {
  await using fx = await tempStore();
  await Deno.writeTextFile(`${fx.dir}/config.yaml`, "plugins:\n  - path: ./missing-plugin.js\n");
  const [a] = await addSessions(fx, 1);
  const r = await hermes(["sessions", "delete", a!.id, "--home", fx.dir]);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, `${a!.id}\n`);
  assert.match(r.stderr, /on_session_delete could not be delivered to the global plugins: .*missing-plugin/);
  assert.equal(await fx.store.getSession(a!.id), undefined);

  await Deno.writeTextFile(`${fx.dir}/config.yaml`, "plugins: [ {path: 1 ");
  const [b] = await addSessions(fx, 1);
  const broken = await hermes(["sessions", "delete", b!.id, "--home", fx.dir]);
  assert.ok(isUserError(broken), broken.stderr);
  assert.match(broken.stderr, /config\.yaml:1:/);
  assert.ok(await fx.store.getSession(b!.id), "a broken config.yaml stops the command before any change");
});
