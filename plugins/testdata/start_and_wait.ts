/**
 * Starts the plugins at the paths given as arguments (job dir = cwd; `--off` first: with `sandbox: off`),
 * prints their pids as JSON, then waits until killed. The lifecycle test SIGKILLs this process and checks that no plugin outlives it.
 */
import { startPlugins } from "../host.ts";
import { silentLogger } from "../../runtime/core/log.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";

const store = openSqliteStore(":memory:");
const off = Deno.args[0] === "--off";
const paths = off ? Deno.args.slice(1) : Deno.args;
const host = await startPlugins(
  paths.map((path) => ({ path, ...(off ? { sandbox: "off" as const } : {}) })),
  {
    job_dir: Deno.cwd(),
    store,
    log: silentLogger,
  },
);
// A hook left in flight: the plugin is busy (awaiting) when this process dies.
host.hooks.onSessionStart({ session_id: "s" });
console.log(JSON.stringify(host.plugins.map((p) => p.pid)));
setInterval(() => {}, 60_000);
