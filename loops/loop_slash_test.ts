/** `/loop INTERVAL /command`: each tick runs the slash command; the model gets no text. */
import assert from "node:assert/strict";
import { ManualClock } from "../runtime/core/_testing.ts";
import { EventBus, type HermesEvent } from "../runtime/core/events.ts";
import { noHooks } from "../runtime/core/hooks.ts";
import { silentLogger } from "../runtime/core/log.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { advanceUntil, ScriptedAgent } from "./_testing.ts";
import type { LoopState } from "./loop_state.ts";
import { createRecurring } from "./recurring.ts";

async function setup() {
  const dir = await Deno.makeTempDir({ prefix: "hermes-loop-slash-" });
  const clock = new ManualClock();
  const store = openSqliteStore(`${dir}/state.db`, { clock });
  const sessionId = (await store.createSession({ job: "t" })).id;
  const bus = new EventBus(clock);
  const events: HermesEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const recurring = createRecurring({
    store,
    clock,
    events: bus,
    hooks: noHooks,
    log: silentLogger,
    loops: { min_interval: "1s" },
    heartbeat: { min_interval: "1s" },
  });
  const agent = new ScriptedAgent(sessionId, clock, [], "the model answered");
  let statusCalls = 0;
  agent.addCommands([
    ...recurring.commands(agent),
    { name: "status", description: "status", run: () => Promise.resolve(`status #${++statusCalls}`) },
  ]);
  return {
    clock,
    store,
    agent,
    recurring,
    events,
    loop: () => store.getState<LoopState>(sessionId, "loop"),
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("/loop 1s /status --times 3: each tick runs /status, no text goes to the model", async () => {
  await using t = await setup();
  const started = await t.agent.input("/loop 1s /status --times 3", { source: "job" });
  assert.match(started.final, /\n\nstatus #1\n\nNext tick in /);
  const result = await advanceUntil(t.clock, t.recurring.drive(t.agent, {}));
  assert.deepEqual(result, { reason: "loop_done", final: "status #3" });
  assert.deepEqual(t.agent.prompts, [], "the model received nothing");
  assert.equal((await t.loop())?.tick, 3);
  assert.deepEqual(t.events.filter((e) => e.type === "loop.tick").length, 3);
});

Deno.test("/loop with a plain prompt still wraps it for the model (the allowed case)", async () => {
  await using t = await setup();
  await t.agent.input("/loop 1s check CI --times 1", { source: "job" });
  assert.equal(t.agent.prompts.length, 1);
  assert.match(t.agent.prompts[0]!.text, /^\[Loop tick 1 of 1 — every 1s\]\ncheck CI\n/);
});

Deno.test("/loop of /loop or an unknown command is refused and leaves no loop behind", async () => {
  await using t = await setup();
  await assert.rejects(t.agent.input("/loop 1s /loop 2s check", { source: "job" }), /Cannot loop \/loop/);
  assert.equal(await t.loop(), undefined);
  await assert.rejects(t.agent.input("/loop 1s /nope", { source: "job" }), /no command \/nope/);
  assert.equal((await t.loop())?.status, "done", "the failed loop is stopped, not left due");
  assert.deepEqual(await t.recurring.isActive(t.agent.sessionId), false);
});
