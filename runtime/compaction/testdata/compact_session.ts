/**
 * A compacting process for the crash tests, to be killed with SIGKILL at a chosen moment:
 * - `hang`: the summary model never answers; prints "summarising" when it is called.
 * - `pause-commit`: prints "in-commit" from inside the commit transaction (after the first row is archived)
 *   and blocks there.
 * - `pause-release`: prints "in-release" after the commit, while releasing the lease, and blocks there.
 * The pauses hold this process's connection only (see `pauseInside`): the store file is not changed.
 * PASS is `hard` (a forced compaction, the default) or `micro` (a micro-compaction between turns).
 * Usage: deno run -A compact_session.ts DB SESSION_ID MODE [PASS]
 */
import { systemClock } from "../../core/clock.ts";
import { EventBus } from "../../core/events.ts";
import { noHooks } from "../../core/hooks.ts";
import { silentLogger } from "../../core/log.ts";
import type { Provider } from "../../providers/provider.ts";
import { pauseInside } from "../../store/sqlite/_testing.ts";
import { openSqliteStore } from "../../store/sqlite/sqlite_store.ts";
import { createCompactor } from "../compactor.ts";

const [dbPath, sessionId, mode, pass = "hard"] = Deno.args as [
  string,
  string,
  "hang" | "pause-commit" | "pause-release",
  ("hard" | "micro")?,
];
const store = openSqliteStore(dbPath);
const say = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
if (mode === "pause-commit") pauseInside(store, "commit", () => say("in-commit"));
if (mode === "pause-release") pauseInside(store, "release", () => say("in-release"));
const provider: Provider = {
  name: "crash-test",
  complete() {
    if (mode === "hang") {
      say("summarising");
      return new Promise(() => {});
    }
    return Promise.resolve({
      message: { role: "assistant", content: "## Goal\nsurvive a crash\n## Progress\nnone" },
      usage: null,
      finish_reason: "stop",
    });
  },
};
const compactor = createCompactor({
  store,
  provider,
  model: "m",
  context_window: 4000,
  config: { prune_tool_results: false, micro: { enabled: true, threshold: 0.5, payback: 1000 } },
  events: new EventBus(systemClock),
  hooks: noHooks,
  clock: systemClock,
  log: silentLogger,
});
const outcome = pass === "micro"
  ? await compactor.afterTurn(sessionId, {})
  : await compactor.compact(sessionId, {});
say(JSON.stringify(outcome));
await store.close();
