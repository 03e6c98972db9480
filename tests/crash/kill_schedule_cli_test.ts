/**
 * Steps are idempotent under SIGKILL, on SQLite: the double-kill sequence (kill during a step's model call,
 * resume, kill again inside the same step, resume) and random kill schedules over many seeds, each checked
 * by the invariant checker of tests/_testing/kill_harness.ts. Real CLI processes, a real store file, the sandboxed
 * shell tool. HERMES_KILL_SEED=N reruns one seed; HERMES_KILL_SEEDS=N sets how many seeds run.
 */
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { type Backend, doubleKill, killSchedules } from "../_testing/kill_cases.ts";

const backend: Backend = {
  name: "sqlite",
  fresh: () =>
    Promise.resolve({
      storeArgs: [],
      openStore: (home: string) => Promise.resolve(openSqliteStore(`${home}/state.db`)),
    }),
};

Deno.test({
  name:
    "kills (sqlite): killed twice in one step's model call, the step is stored and sent once, its tools run once",
  ignore: withoutSandbox,
  fn: () => doubleKill(backend),
});

Deno.test({
  name:
    "kills (sqlite): random kill schedules (1–3 per step) keep every step once and every tool call answered",
  ignore: withoutSandbox,
  fn: () => killSchedules(backend),
});
