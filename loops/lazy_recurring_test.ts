import assert from "node:assert/strict";
import { ManualClock } from "../runtime/core/_testing.ts";
import { EventBus } from "../runtime/core/events.ts";
import { noHooks } from "../runtime/core/hooks.ts";
import { silentLogger } from "../runtime/core/log.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { advanceUntil, ScriptedAgent } from "./_testing.ts";
import { lazyRecurring } from "./lazy_recurring.ts";
import { createRecurring, type RecurringOptions } from "./recurring.ts";

async function setup() {
  const dir = await Deno.makeTempDir({ prefix: "hermes-lazy-recurring-" });
  const clock = new ManualClock();
  const store = openSqliteStore(`${dir}/state.db`, { clock });
  const sessionId = (await store.createSession({ job: "t" })).id;
  const options: RecurringOptions = {
    store,
    clock,
    events: new EventBus(clock),
    hooks: noHooks,
    log: silentLogger,
    loops: { min_interval: "1s" },
  };
  return {
    clock,
    sessionId,
    options,
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("the lazy commands have the names and descriptions of the real ones", async () => {
  await using t = await setup();
  const agent = new ScriptedAgent(t.sessionId, t.clock);
  const describe = (commands: { name: string; description: string }[]) =>
    commands.map(({ name, description }) => ({ name, description }));
  assert.deepEqual(
    describe(lazyRecurring(t.options).commands(agent)),
    describe(createRecurring(t.options).commands(agent)),
  );
});

Deno.test("a lazy /loop runs the real command, and the driver it loads runs the later ticks", async () => {
  await using t = await setup();
  const recurring = lazyRecurring(t.options);
  const agent = new ScriptedAgent(t.sessionId, t.clock, ["red", "green"]);
  agent.addCommands(recurring.commands(agent));
  assert.equal(await recurring.isActive(t.sessionId), false);

  const started = await advanceUntil(t.clock, agent.input("/loop 1s check CI --times 2", { source: "job" }));
  assert.match(started.final, /^Loop started: every 1s, up to 2 ticks — "check CI"\./);
  assert.equal(await recurring.isActive(t.sessionId), true);

  assert.deepEqual(await advanceUntil(t.clock, recurring.drive(agent, {})), {
    reason: "loop_done",
    final: "green",
  });
  assert.equal(agent.prompts.length, 2);
  assert.equal(await recurring.isActive(t.sessionId), false);
});
