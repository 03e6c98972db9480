import assert from "node:assert/strict";
import { createLogger } from "../runtime/core/log.ts";
import { fixture, pluginTest } from "./_testing.ts";
import { lazyPlugins } from "./lazy.ts";
import { pluginIdentity, PluginStateTable } from "./state.ts";

pluginTest("lazy plugins start on the first hook call; one on_session_delete carries every id", async () => {
  await using f = await fixture();
  await f.write({
    "recorder.js": `export async function register(ctx) {
      await ctx.state.set("started", true);
      ctx.registerHook("on_session_delete", async (e) => {
        await ctx.state.set("calls", [...(await ctx.state.get("calls") ?? []), e]);
      });
    }`,
  });
  const state = new PluginStateTable(f.store, pluginIdentity({ root: `${f.dir}/recorder.js` }));
  const lazy = lazyPlugins([{ path: "recorder.js" }], {
    job_dir: f.dir,
    store: f.store,
    log: createLogger({ write: () => {} }),
  });
  assert.equal(await state.get("started"), undefined, "nothing starts before a hook is called");
  await lazy.hooks.onSessionDelete({ session_id: "a", reason: "delete", deleted_ids: ["a", "b", "c"] });
  assert.equal(await state.get("started"), true);
  assert.deepEqual(await state.get("calls"), [{
    session_id: "a",
    reason: "delete",
    deleted_ids: ["a", "b", "c"],
  }]);
  await lazy.close();

  const unused = lazyPlugins([{ path: "recorder.js" }], {
    job_dir: f.dir,
    store: f.store,
    log: createLogger({ write: () => {} }),
  });
  await unused.close();
});
