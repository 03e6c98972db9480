/**
 * A compacting process for the crash tests, to be killed with SIGKILL at a chosen moment:
 * - `hang`: the summary model never answers; prints "summarising" when it is called.
 * - `pause-commit`: prints "in-commit" from inside the commit transaction (after the first row is archived)
 *   and blocks there.
 * - `pause-release`: prints "in-release" after the commit, while releasing the lease, and blocks there.
 * The pauses use a TEMP trigger and a function registered on this process's connection only: the store file
 * is not changed. Usage: deno run -A compact_session.ts DB SESSION_ID MODE
 */
import { systemClock } from "../../core/clock.ts";
import { EventBus } from "../../core/events.ts";
import { noHooks } from "../../core/hooks.ts";
import { silentLogger } from "../../core/log.ts";
import type { Provider } from "../../providers/provider.ts";
import { Store } from "../../store/store.ts";
import { createCompactor } from "../compactor.ts";

const [dbPath, sessionId, mode] = Deno.args as [string, string, "hang" | "pause-commit" | "pause-release"];
const store = Store.open(dbPath);
const say = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
const blocker = new Int32Array(new SharedArrayBuffer(4));
store.db.function("hermes_test_pause", (label) => {
  say(String(label));
  Atomics.wait(blocker, 0, 0, 60_000);
  return null;
});
if (mode === "pause-commit") {
  store.db.exec(`CREATE TEMP TRIGGER pause_commit AFTER UPDATE OF active ON main.messages
    BEGIN SELECT hermes_test_pause('in-commit'); END`);
} else if (mode === "pause-release") {
  store.db.exec(`CREATE TEMP TRIGGER pause_release BEFORE DELETE ON main.compaction_leases
    BEGIN SELECT hermes_test_pause('in-release'); END`);
}
const provider: Provider = {
  name: "crash-test",
  complete() {
    if (mode === "hang") {
      say("summarising");
      return new Promise(() => {});
    }
    return Promise.resolve({
      message: { role: "assistant", content: "## Goal\nsurvive a crash" },
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
  config: { prune_tool_results: false },
  events: new EventBus(systemClock),
  hooks: noHooks,
  clock: systemClock,
  log: silentLogger,
});
const outcome = await compactor.compact(sessionId, {});
say(JSON.stringify(outcome));
store.close();
