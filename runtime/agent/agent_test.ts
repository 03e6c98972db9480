import assert from "node:assert/strict";
import { Agent } from "./agent.ts";
import { systemClock } from "../core/clock.ts";
import { EventBus } from "../core/events.ts";
import { type Hooks, noHooks } from "../core/hooks.ts";
import { Budget } from "./limits.ts";
import { silentLogger } from "../core/log.ts";
import type { ModelRequest, Provider } from "../providers/provider.ts";
import type { ScriptEntry } from "../providers/script.ts";
import { createScriptedProvider } from "../providers/scripted.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { Tool } from "../tools/tool.ts";

/** The scripted provider, recording every request it answers. */
function recording(script: ScriptEntry[]): { provider: Provider; requests: ModelRequest[] } {
  const inner = createScriptedProvider(script, { clock: systemClock });
  const requests: ModelRequest[] = [];
  return {
    requests,
    provider: {
      name: "recording",
      complete: (request, options) => (requests.push(request), inner.complete(request, options)),
    },
  };
}

async function setup(script: ScriptEntry[], options: { hooks?: Hooks; tools?: Tool[] } = {}) {
  const dir = await Deno.makeTempDir({ prefix: "hermes-agent-" });
  const store = openSqliteStore(`${dir}/state.db`);
  const session = await store.createSession({ job: "t" });
  const { provider, requests } = recording(script);
  const agent = new Agent({
    store,
    sessionId: session.id,
    provider,
    model: "m",
    tools: options.tools ?? [],
    hooks: options.hooks ?? noHooks,
    events: new EventBus(systemClock),
    clock: systemClock,
    log: silentLogger,
    budget: new Budget(),
    toolContext: { job_dir: dir, env: {}, host_env: {} },
  });
  return { dir, store, session, agent, requests, [Symbol.asyncDispose]: () => store.close() };
}

const echo = (runs: Record<string, unknown>[]): Tool => ({
  spec: { name: "echo", description: "echo", parameters: { type: "object" } },
  run: (
    args,
  ) => (runs.push(args), Promise.resolve({ status: "ok", content: `echo ${JSON.stringify(args)}` })),
});

Deno.test("a tool call left open by a killed run is closed before the next user message", async () => {
  await using t = await setup([{ content: "resumed" }]);
  await t.store.appendMessages(t.session.id, [
    { role: "user", content: "first" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c1", name: "echo", arguments: "{}" }, { id: "c2", name: "echo", arguments: "{}" }],
    },
  ]);
  assert.equal((await t.agent.prompt("again", { source: "cli" })).final, "resumed");
  const roles = t.requests[0]!.messages.map((m) => m.role);
  assert.deepEqual(roles, ["user", "assistant", "tool", "tool", "user"]);
  assert.equal(t.requests[0]!.messages[2]!.tool_call_id, "c1");
  // Tools of a round run in order: the first without a result may have run, the next never started.
  assert.match(t.requests[0]!.messages[2]!.content, /interrupted, may have run/);
  assert.equal(t.requests[0]!.messages[3]!.tool_call_id, "c2");
  assert.match(t.requests[0]!.messages[3]!.content, /did not run/);
});

Deno.test("messages appended by another connection reach the next request", async () => {
  await using t = await setup([{ content: "one" }, { content: "two" }]);
  await t.agent.prompt("hello", { source: "cli" });
  const other = openSqliteStore(`${t.dir}/state.db`);
  await other.appendMessages(t.session.id, [{ role: "user", content: "from elsewhere" }]);
  await other.close();
  await t.agent.prompt("again", { source: "cli" });
  // Two user messages in a row reach the model as one (strict chat templates reject `user, user`).
  assert.deepEqual(t.requests[1]!.messages.map((m) => [m.role, m.content]), [
    ["user", "hello"],
    ["assistant", "one"],
    ["user", "from elsewhere\n\nagain"],
  ]);
});

Deno.test("pre_llm_call text goes to the request only; the stored user message is unchanged", async () => {
  const hooks: Hooks = { ...noHooks, preLlmCall: () => Promise.resolve(["RULES", ""]) };
  await using t = await setup([{ content: "ok" }], { hooks });
  await t.agent.prompt("question", { source: "cli" });
  assert.equal(t.requests[0]!.messages.at(-1)!.content, "question\n\nRULES");
  assert.equal((await t.store.activeMessages(t.session.id))[0]!.content, "question");
});

Deno.test("pre_tool_call can block a call (not run) or modify its arguments (run with them)", async () => {
  const runs: Record<string, unknown>[] = [];
  const hooks: Hooks = {
    ...noHooks,
    preToolCall: (p) =>
      Promise.resolve(
        p.args.block
          ? { action: "block", message: "not today" }
          : { action: "modify", args: { changed: true } },
      ),
  };
  await using t = await setup([
    {
      tool_calls: [{ name: "echo", arguments: { block: true } }, {
        name: "echo",
        arguments: { block: false },
      }],
    },
    { content: "done" },
  ], { hooks, tools: [echo(runs)] });
  await t.agent.prompt("go", { source: "cli" });
  assert.deepEqual(runs, [{ changed: true }]);
  const results = (await t.store.activeMessages(t.session.id)).filter((m) => m.role === "tool").map((m) =>
    m.content
  );
  assert.deepEqual(results, ["blocked: not today", 'echo {"changed":true}']);
});

Deno.test("an unknown tool and malformed arguments become error results, not crashes", async () => {
  await using t = await setup([
    { tool_calls: [{ name: "nope", arguments: {} }, { name: "echo", arguments: "{not json" }] },
    { content: "recovered" },
  ], { tools: [echo([])] });
  assert.equal((await t.agent.prompt("go", { source: "cli" })).final, "recovered");
  const results = (await t.store.activeMessages(t.session.id)).filter((m) => m.role === "tool").map((m) =>
    m.content
  );
  assert.match(results[0]!, /unknown tool "nope"/);
  assert.match(results[1]!, /invalid arguments for echo/);
});
