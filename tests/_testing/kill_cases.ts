/** The kill cases both backends run (tests/crash/kill_schedule_cli_test.ts, tests/postgres/postgres_kill_schedule_cli_test.ts). */
import assert from "node:assert/strict";
import type { Store } from "../../runtime/store/store.ts";
import { checkInvariants, randomSchedule, runWithKills } from "./kill_harness.ts";

export interface Backend {
  name: string;
  /** A store for one run: the global flags that name it (none: the home's SQLite file) and how to open it. */
  fresh(): Promise<{ storeArgs: string[]; openStore: (home: string) => Promise<Store> }>;
}

const STEPS = ["step one", "step two"];
/** Three steps for the random schedules: kills between steps and in the middle one too. */
const SCHEDULED_STEPS = ["step one", "step two", "step three"];

export async function doubleKill(backend: Backend): Promise<void> {
  const report = await runWithKills({
    ...await backend.fresh(),
    steps: STEPS,
    kills: [[{ at: "request" }, { at: "request" }], []],
  });
  checkInvariants(report, STEPS, `${backend.name} double kill`);
  assert.equal(report.kills, 2);
  assert.deepEqual(report.steps.map((r) => r.attempt), [3, 1], "step one started by three runs");
  assert.match(report.stderr, /step 1 of session \S+ \(attempt 3\) was sent by a run that stopped/);
  // Each step's one round of two tool calls ran once each; nothing ran while a model call was killed.
  assert.equal(report.effects.length, 4);
  assert.equal(new Set(report.effects).size, 4);
  assert.equal(report.messages.filter((m) => m.tool_calls?.length).length, 2, "one round per step");
  const sent = report.requests.map((r) =>
    (r.messages ?? []).filter((m) => m.role === "user").map((m) => m.content)
  );
  assert.deepEqual(sent.slice(0, 3), [["step one"], ["step one"], ["step one"]], "the same request, resent");
}

export async function killSchedules(backend: Backend): Promise<void> {
  const one = Deno.env.get("HERMES_KILL_SEED");
  const count = Number(Deno.env.get("HERMES_KILL_SEEDS") ?? 12);
  const base = one !== undefined ? Number(one) : Math.floor(Math.random() * 1e9);
  const seeds = one !== undefined ? [base] : Array.from({ length: count }, (_, i) => base + i);
  console.log(`kills (${backend.name}): seeds ${seeds.join(", ")} (HERMES_KILL_SEED=N reruns one)`);
  let processes = 0;
  let kills = 0;
  // Four seeds at a time: each spends most of its time waiting on its processes, not computing.
  const lanes = [0, 1, 2, 3].map((lane) => seeds.filter((_, i) => i % 4 === lane));
  await Promise.all(lanes.map(async (lane) => {
    for (const seed of lane) {
      const label = `${backend.name} seed ${seed}`;
      const kills_ = randomSchedule(seed, SCHEDULED_STEPS.length);
      try {
        const report = await runWithKills({
          ...await backend.fresh(),
          steps: SCHEDULED_STEPS,
          kills: kills_,
        });
        checkInvariants(report, SCHEDULED_STEPS, label);
        processes += report.processes;
        kills += report.kills;
      } catch (error) {
        throw new Error(`${label} failed (schedule ${JSON.stringify(kills_)}): ${error}`, { cause: error });
      }
    }
  }));
  console.log(
    `kills (${backend.name}): ${seeds.length} seeds, ${kills} kills, ${processes} processes, all hold`,
  );
}
