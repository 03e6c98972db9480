import assert from "node:assert/strict";
import { ManualClock } from "../runtime/core/_testing.ts";
import { EventBus } from "../runtime/core/events.ts";
import { type LoopTickPayload, noHooks } from "../runtime/core/hooks.ts";
import type { HeartbeatConfig, LoopsConfig } from "../runtime/config/job_schema.ts";
import { silentLogger } from "../runtime/core/log.ts";
import type { Store } from "../runtime/store/store.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import type { EventType, HermesEvent } from "../runtime/core/events.ts";
import { advance, advanceUntil, ScriptedAgent, type ScriptedReply } from "./_testing.ts";
import type { LoopState } from "./loop_state.ts";
import { createRecurring, type Judge } from "./recurring.ts";
import type { HeartbeatState } from "./heartbeat_state.ts";

interface Setup {
  clock: ManualClock;
  store: Store;
  sessionId: string;
  events: HermesEvent[];
  hookCalls: LoopTickPayload[];
  /** A process: a fresh Recurring and agent over the same store (as after a restart). */
  process(replies?: ScriptedReply[], options?: { judge?: Judge; loops?: LoopsConfig }): {
    recurring: ReturnType<typeof createRecurring>;
    agent: ScriptedAgent;
  };
  loop(): Promise<LoopState | undefined>;
  heartbeat(): Promise<HeartbeatState | undefined>;
  [Symbol.asyncDispose](): Promise<void>;
}

const FAST: LoopsConfig = { min_interval: "1s", self_paced_floor: "1s", self_paced_ceiling: "4s" };

async function setup(config: { loops?: LoopsConfig; heartbeat?: HeartbeatConfig } = {}): Promise<Setup> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-recurring-" });
  const clock = new ManualClock();
  const store = openSqliteStore(`${dir}/state.db`, { clock });
  const sessionId = (await store.createSession({ job: "t" })).id;
  const bus = new EventBus(clock);
  const events: HermesEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const hookCalls: LoopTickPayload[] = [];
  const hooks = { ...noHooks, onLoopTick: (p: LoopTickPayload) => (hookCalls.push(p), Promise.resolve()) };
  return {
    clock,
    store,
    sessionId,
    events,
    hookCalls,
    process(replies = [], options = {}) {
      const recurring = createRecurring({
        store,
        clock,
        events: bus,
        hooks,
        log: silentLogger,
        loops: options.loops ?? config.loops ?? FAST,
        heartbeat: config.heartbeat ?? { min_interval: "1s" },
        ...(options.judge ? { judge: options.judge } : {}),
      });
      const agent = new ScriptedAgent(sessionId, clock, replies);
      agent.addCommands(recurring.commands(agent));
      return { recurring, agent };
    },
    loop: () => store.getState<LoopState>(sessionId, "loop"),
    heartbeat: () => store.getState<HeartbeatState>(sessionId, "heartbeat"),
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const ticksOf = <T extends EventType>(events: HermesEvent[], type: T) =>
  events.filter((e): e is HermesEvent<T> => e.type === type);

Deno.test("/loop 1s --times 3: first tick at once, exactly 3 ticks, each 1s after the previous turn ended", async () => {
  await using t = await setup();
  const slow = (text: string) => ({ text, delay_ms: 200 });
  const { recurring, agent } = t.process([slow("red"), slow("still red"), slow("green")]);
  const t0 = t.clock.now();
  const output =
    (await advanceUntil(t.clock, agent.input("/loop 1s check CI --times 3", { source: "job" }))).final;
  assert.match(output, /^Loop started: every 1s, up to 3 ticks — "check CI"\./);
  assert.match(output, /\n\nred\n\nNext tick in 1s\.$/);
  assert.equal(agent.prompts.length, 1, "the first tick ran inside the command");
  assert.ok(await recurring.isActive(t.sessionId));

  const result = await advanceUntil(t.clock, recurring.drive(agent, {}));
  assert.deepEqual(result, { reason: "loop_done", final: "green" });
  assert.deepEqual(agent.prompts.map((p) => p.at - t0), [0, 1_200, 2_400]);
  assert.match(agent.prompts[1]!.text, /^\[Loop tick 2 of 3 — every 1s\]\ncheck CI\n/);
  assert.deepEqual(ticksOf(t.events, "loop.tick").map((e) => e.tick), [1, 2, 3]);
  assert.deepEqual(ticksOf(t.events, "loop.end").map((e) => [e.reason, e.status, e.ticks]), [[
    "times",
    "done",
    3,
  ]]);
  assert.deepEqual(t.hookCalls, [1, 2, 3].map((tick) => ({ session_id: t.sessionId, kind: "loop", tick })));
  assert.equal(await recurring.isActive(t.sessionId), false);
  assert.equal((await t.loop())?.tick, 3);
});

Deno.test("LOOP_COMPLETE on a line of its own ends the loop; mid-sentence it does not", async () => {
  await using t = await setup();
  const { recurring, agent } = t.process(["LOOP_COMPLETE is near", "All green.\nLOOP_COMPLETE", "never"]);
  await agent.input("/loop 1s check", { source: "job" });
  const result = await advanceUntil(t.clock, recurring.drive(agent, {}));
  assert.deepEqual(result, { reason: "loop_done", final: "All green.\nLOOP_COMPLETE" });
  assert.equal(agent.prompts.length, 2);
  assert.equal((await t.loop())?.reason, "complete");
});

Deno.test("a first tick that answers LOOP_COMPLETE ends the loop inside the command", async () => {
  await using t = await setup();
  const { recurring, agent } = t.process(["LOOP_COMPLETE"]);
  const { final } = await agent.input("/loop 5m check", { source: "cli" });
  assert.match(final, /Loop done after 1 tick: the model answered LOOP_COMPLETE\.$/);
  assert.equal(await recurring.isActive(t.sessionId), false);
  assert.deepEqual(await recurring.drive(agent, {}), { reason: "loop_done", final: "LOOP_COMPLETE" });
});

Deno.test("max_ticks pauses the loop; /loop resume gives a fresh budget", async () => {
  await using t = await setup({ loops: { ...FAST, max_ticks: 2 } });
  const { recurring, agent } = t.process();
  await agent.input("/loop 1s check", { source: "job" });
  assert.equal((await advanceUntil(t.clock, recurring.drive(agent, {}))).reason, "loop_paused");
  assert.equal(agent.prompts.length, 2);
  assert.equal((await t.loop())?.reason, "max_ticks");
  assert.deepEqual(ticksOf(t.events, "loop.end").map((e) => [e.reason, e.status]), [["max_ticks", "paused"]]);
  assert.match((await agent.input("/loop resume", { source: "job" })).final, /^Loop resumed at tick 2/);
  assert.equal((await advanceUntil(t.clock, recurring.drive(agent, {}))).reason, "loop_paused");
  assert.equal(agent.prompts.length, 4);
});

Deno.test("a tick whose turn fails is rolled back: not counted, still due, and a new process runs it", async () => {
  await using t = await setup();
  const first = t.process(["red", new Error("provider exploded")]);
  await first.agent.input("/loop 1s check --times 3", { source: "job" });
  await assert.rejects(advanceUntil(t.clock, first.recurring.drive(first.agent, {})), /provider exploded/);
  const stored = (await t.loop())!;
  assert.equal(stored.tick, 1);
  assert.equal(stored.status, "active");
  assert.ok(stored.next_due <= t.clock.now(), "the failed tick is still due");
  assert.ok(await first.recurring.isActive(t.sessionId));

  const second = t.process(["amber", "green"]);
  const result = await advanceUntil(t.clock, second.recurring.drive(second.agent, {}));
  assert.deepEqual(result, { reason: "loop_done", final: "green" });
  assert.match(second.agent.prompts[0]!.text, /^\[Loop tick 2 of 3/);
  assert.equal((await t.loop())?.tick, 3);
});

Deno.test("a failing first tick fails the command and leaves the loop due, nothing stuck", async () => {
  await using t = await setup();
  const { recurring, agent } = t.process([new Error("no model"), "fine"]);
  await assert.rejects(agent.input("/loop 1s check --times 1", { source: "job" }), /no model/);
  assert.equal((await t.loop())?.tick, 0);
  assert.ok(await recurring.isActive(t.sessionId));
  assert.deepEqual(await advanceUntil(t.clock, recurring.drive(agent, {})), {
    reason: "loop_done",
    final: "fine",
  });
});

Deno.test("a restarted process continues from the stored tick count without a burst of catch-up ticks", async () => {
  await using t = await setup();
  const first = t.process();
  await first.agent.input("/loop 1m check", { source: "job" });
  const firstDrive = new AbortController();
  const driving = first.recurring.drive(first.agent, { signal: firstDrive.signal });
  await advance(t.clock, 61_000, 1_000);
  firstDrive.abort(new DOMException("killed", "AbortError"));
  await assert.rejects(driving, { name: "AbortError" });
  assert.equal((await t.loop())?.tick, 2);

  await t.clock.advance(10 * 60_000); // down for ten minutes: nine ticks missed
  const second = t.process();
  const resumed = new AbortController();
  const drive = second.recurring.drive(second.agent, { signal: resumed.signal });
  await advance(t.clock, 30_000, 1_000);
  assert.equal(second.agent.prompts.length, 1, "one tick at once, not a backlog");
  assert.match(second.agent.prompts[0]!.text, /^\[Loop tick 3 — every 1m\]/);
  await advance(t.clock, 31_000, 1_000);
  assert.equal(second.agent.prompts.length, 2);
  resumed.abort(new DOMException("done", "AbortError"));
  await assert.rejects(drive, { name: "AbortError" });
  assert.equal((await t.loop())?.tick, 4);
});

Deno.test("intervals below loops.min_interval are raised, and the command says so", async () => {
  await using t = await setup({ loops: { min_interval: "30s" } });
  const { agent } = t.process();
  const raised = (await agent.input("/loop 5s check", { source: "job" })).final;
  assert.match(raised, /Note: interval 5s raised to 30s \(loops\.min_interval\)\./);
  assert.equal((await t.loop())?.interval_ms, 30_000);
  const kept = (await agent.input("/loop 45s check", { source: "job" })).final;
  assert.doesNotMatch(kept, /raised/);
  assert.equal((await t.loop())?.interval_ms, 45_000);
});

Deno.test("--until: the judge's yes ends the loop, blocked pauses it, an error keeps it going", async () => {
  await using t = await setup();
  const answers = ["no", "garbled", "yes"];
  const questions: string[] = [];
  const judge: Judge = (question) => {
    questions.push(question);
    return Promise.resolve(answers.shift()!);
  };
  const { recurring, agent } = t.process(["red", "amber", "green"], { judge });
  await agent.input("/loop 1s check --until CI is green", { source: "job" });
  assert.deepEqual(await advanceUntil(t.clock, recurring.drive(agent, {})), {
    reason: "loop_done",
    final: "green",
  });
  assert.equal(agent.prompts.length, 3, "the garbled answer kept the loop going");
  assert.match(questions[0]!, /Condition: CI is green/);
  assert.match(questions[2]!, /\ngreen\n/);
  assert.equal((await t.loop())?.reason, "until");

  const blocked = t.process(["need a token"], { judge: () => Promise.resolve("blocked") });
  const output = (await blocked.agent.input("/loop 1s deploy --until deployed", { source: "job" })).final;
  assert.match(output, /Loop paused after 1 tick: the --until condition is blocked/);
  assert.equal((await t.loop())?.status, "paused");

  const failing = t.process(["a", "b"], { judge: () => Promise.reject(new Error("judge down")) });
  await failing.agent.input("/loop 1s x --until done --times 2", { source: "job" });
  assert.equal((await advanceUntil(t.clock, failing.recurring.drive(failing.agent, {}))).reason, "loop_done");
  assert.equal((await t.loop())?.reason, "times");
});

Deno.test("--until is refused when no judge model exists; allowed with one", async () => {
  await using t = await setup();
  const { agent } = t.process();
  await assert.rejects(agent.input("/loop 1s x --until y", { source: "job" }), {
    name: "ValidationError",
    message: /no model is available to judge/,
  });
  const judged = t.process([], { judge: () => Promise.resolve("no") });
  assert.match((await judged.agent.input("/loop 1s x --until y", { source: "job" })).final, /until y/);
});

Deno.test("one loop per session: a new /loop replaces the old one", async () => {
  await using t = await setup();
  const { agent } = t.process();
  await agent.input("/loop 1m first", { source: "job" });
  const output = (await agent.input("/loop 2m second", { source: "job" })).final;
  assert.match(output, /Note: replaced the previous loop \("first", 1 tick\)\./);
  assert.equal((await t.loop())?.prompt, "second");
  assert.deepEqual(ticksOf(t.events, "loop.end").map((e) => e.reason), ["replaced"]);
  assert.match(
    (await agent.input("/loop status", { source: "job" })).final,
    /^Loop active: every 2m — "second"/,
  );
});

Deno.test("/loop pause wakes a sleeping driver at once; resume and stop", async () => {
  await using t = await setup();
  const { recurring, agent } = t.process();
  assert.equal((await agent.input("/loop status", { source: "job" })).final, "No loop in this session.");
  await agent.input("/loop 1h check", { source: "job" });
  const drive = recurring.drive(agent, {});
  await advance(t.clock, 100);
  assert.match((await agent.input("/loop pause", { source: "rpc" })).final, /^Loop paused after 1 tick\./);
  assert.deepEqual(await drive, { reason: "loop_paused", final: "ok" }, "returned without the clock moving");
  assert.equal((await agent.input("/loop pause", { source: "rpc" })).final, "The loop is already paused.");
  assert.match((await agent.input("/loop resume", { source: "rpc" })).final, /^Loop resumed/);
  assert.equal((await agent.input("/loop resume", { source: "rpc" })).final, "The loop is already running.");
  assert.equal((await agent.input("/loop stop", { source: "rpc" })).final, "Loop stopped after 1 tick.");
  assert.equal((await agent.input("/loop stop", { source: "rpc" })).final, "No loop to stop.");
  assert.deepEqual(await recurring.drive(agent, {}), { reason: "loop_done", final: "ok" });
});

Deno.test("self-paced loop: floor, doubling while replies only differ in times, ceiling, snap back", async () => {
  await using t = await setup();
  const same = (time: string) => `At ${time} CI is still red.`;
  const replies = [
    same("10:00"),
    same("10:01"),
    same("10:03"),
    same("10:07"),
    same("10:11"),
    "CI is green",
    "x",
  ];
  const { recurring, agent } = t.process(replies);
  const t0 = t.clock.now();
  await agent.input("/loop check CI --times 7", { source: "job" });
  await advanceUntil(t.clock, recurring.drive(agent, {}));
  const gaps = agent.prompts.slice(1).map((p, i) => (p.at - agent.prompts[i]!.at) / 1000);
  assert.equal(agent.prompts[0]!.at, t0);
  assert.deepEqual(gaps, [1, 2, 4, 4, 4, 1]);
});

Deno.test("/heartbeat: a 3.5 s turn with a 1 s heartbeat is followed by exactly one beat, with the guard", async () => {
  await using t = await setup();
  const { recurring, agent } = t.process([{ text: "done with the busy work", delay_ms: 3_500 }]);
  const t0 = t.clock.now();
  assert.match(
    (await agent.input("/heartbeat every 1s check the inbox", { source: "job" })).final,
    /^Heartbeat set: every 1s — "check the inbox"\. The first beat comes in 1s/,
  );
  const controller = new AbortController();
  const drive = recurring.drive(agent, { signal: controller.signal });
  const busy = agent.prompt("a long real task", { source: "rpc" });
  await advance(t.clock, 4_400, 50);
  await busy;
  assert.deepEqual(agent.prompts.map((p) => [p.text.split("\n")[0], p.at - t0]), [
    ["a long real task", 0],
    ["[Heartbeat — every 1s]", 3_500],
  ]);
  assert.match(agent.prompts[1]!.text, /do not invent work/);
  assert.deepEqual(ticksOf(t.events, "heartbeat.tick").map((e) => e.tick), [1]);
  assert.deepEqual(t.hookCalls, [{ session_id: t.sessionId, kind: "heartbeat", tick: 1 }]);
  await advance(t.clock, 200, 50);
  assert.equal(agent.prompts.length, 3, "the next beat comes one interval after the last");
  controller.abort(new DOMException("stop", "AbortError"));
  await assert.rejects(drive, { name: "AbortError" });
});

Deno.test("/heartbeat below heartbeat.min_interval is refused; at or above it is set", async () => {
  await using t = await setup({ heartbeat: {} });
  const { recurring, agent } = t.process();
  await assert.rejects(agent.input("/heartbeat every 30s x", { source: "job" }), {
    name: "ValidationError",
    message: "Cannot set /heartbeat every 30s: the interval is below heartbeat.min_interval (1m)",
  });
  assert.equal(await recurring.isActive(t.sessionId), false);
  await agent.input("/heartbeat every 2 minutes x", { source: "job" });
  assert.equal((await t.heartbeat())?.interval_ms, 120_000);
  assert.ok(await recurring.isActive(t.sessionId));
});

Deno.test("/heartbeat resume re-anchors: no instant stale beat; clear ends it; state survives a restart", async () => {
  await using t = await setup();
  const { recurring, agent } = t.process();
  await agent.input("/heartbeat every 1s check", { source: "job" });
  assert.match(
    (await agent.input("/heartbeat pause", { source: "job" })).final,
    /^Heartbeat paused after 0 beats/,
  );
  assert.equal(await recurring.isActive(t.sessionId), false);
  await advance(t.clock, 10_000, 1_000);
  await agent.input("/heartbeat resume", { source: "job" });
  const controller = new AbortController();
  const drive = recurring.drive(agent, { signal: controller.signal });
  await advance(t.clock, 900, 50);
  assert.equal(agent.prompts.length, 0, "no stale beat right after resume");
  await advance(t.clock, 200, 50);
  assert.equal(agent.prompts.length, 1);

  const restarted = t.process();
  assert.ok(await restarted.recurring.isActive(t.sessionId), "a new process sees the stored heartbeat");
  assert.match((await restarted.agent.input("/heartbeat status", { source: "job" })).final, /Beats: 1/);
  assert.match(
    (await agent.input("/heartbeat clear", { source: "job" })).final,
    /^Heartbeat cleared after 1 beat\./,
  );
  assert.deepEqual(await drive, { reason: "idle", final: "ok" }, "clearing wakes and ends the driver");
  controller.abort();
  assert.equal(
    (await agent.input("/heartbeat status", { source: "job" })).final,
    "No heartbeat in this session.",
  );
});

Deno.test("drive refuses a second driver for the same session", async () => {
  await using t = await setup();
  const { recurring, agent } = t.process();
  await agent.input("/loop 1h x", { source: "job" });
  const controller = new AbortController();
  const first = recurring.drive(agent, { signal: controller.signal });
  await assert.rejects(recurring.drive(agent, {}), /already being driven/);
  controller.abort(new DOMException("stop", "AbortError"));
  await assert.rejects(first, { name: "AbortError" });
});
