import { hooksContract } from "../tests/contracts/hooks.ts";
import { createLogger } from "../runtime/core/log.ts";
import { noHooks } from "../runtime/core/hooks.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { startPlugins } from "./host.ts";
import { lazyPlugins } from "./lazy.ts";
import { withoutSandbox } from "./_testing.ts";

const PASS_THROUGH = `export function register(ctx) {
  for (const hook of ["on_session_start", "on_session_end", "post_llm_call", "post_tool_call", "post_compaction",
    "on_session_delete", "on_loop_tick"]) ctx.registerHook(hook, () => {});
  ctx.registerHook("pre_llm_call", (e) => "rules for " + e.session_id);
  ctx.registerHook("pre_tool_call", () => undefined);
}
`;

async function setup() {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-hooks-" }));
  await Deno.writeTextFile(`${dir}/pass.ts`, PASS_THROUGH);
  const store = openSqliteStore(`${dir}/state.db`);
  const options = { job_dir: dir, store, log: createLogger({ level: "error", write: () => {} }) };
  const cleanup = async () => {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  };
  return { dir, options, cleanup };
}

hooksContract(
  "noHooks",
  () => Promise.resolve({ hooks: noHooks, injected: [], close: () => Promise.resolve() }),
);

hooksContract("plugin host (subprocess)", async () => {
  const { options, cleanup } = await setup();
  const host = await startPlugins([{ path: "./pass.ts" }], options);
  return {
    hooks: host.hooks,
    injected: ["rules for contract-session"],
    close: async () => {
      await host.stop();
      await cleanup();
    },
  };
}, { ignore: withoutSandbox });

hooksContract("lazy global plugins", async () => {
  const { options, cleanup } = await setup();
  const lazy = lazyPlugins([{ path: "./pass.ts" }], options);
  return {
    hooks: lazy.hooks,
    injected: ["rules for contract-session"],
    close: async () => {
      await lazy.close();
      await cleanup();
    },
  };
}, { ignore: withoutSandbox });
