/**
 * Subagents through the real CLI against the scripted OpenAI server: the delegate tool, the concurrency cap
 * observed at the server, usage rolling up to the parent, the child's tools bounded by the parent's, the
 * depth limit, and a child's failure as a tool error of the parent.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, startOpenAIServer, textOf } from "../_testing/openai_server.ts";
import { type ReceivedSpan, startOtlpReceiver } from "../_testing/otlp_receiver.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import type { RunResult } from "../../runtime/session/outcome.ts";

type Event = Record<string, unknown>;
type Usage = RunResult["usage"];
const resultOf = (events: Event[]) => events.at(-1)! as unknown as RunResult;

const systemOf = (body: ChatRequestBody) => textOf(body.messages?.find((m) => m.role === "system")?.content);
const userOf = (body: ChatRequestBody) => textOf(body.messages?.find((m) => m.role === "user")?.content);
const toolMessages = (body: ChatRequestBody) => (body.messages ?? []).filter((m) => m.role === "tool");
const toolNames = (body: ChatRequestBody) =>
  (body.tools ?? []).map((t) => (t as { function: { name: string } }).function.name).sort();
const isChild = (body: ChatRequestBody) => systemOf(body).includes("You are a worker");

async function jobDir(job: string): Promise<string> {
  return await writeFiles(await tempDir("hermes-agents-"), { "job.yaml": job });
}

function env(url: string, home: string): Record<string, string> {
  return { OPENAI_API_KEY: "k", OPENAI_BASE_URL: url, HOME: home };
}

const LEAD = `name: lead
model: { provider: openai, name: m }
system: You are the lead.
prompt: split the work
tools:
  read_file: { paths: ["."] }
  list_dir: { paths: ["."] }
`;

Deno.test("agents: 6 delegated tasks under max_concurrent_agents: 2 — never more than 2 children in a model call, usage rolls up", async () => {
  let inFlight = 0;
  let most = 0;
  const waiting: Array<() => void> = [];
  const server = await startOpenAIServer({
    // Child model calls are held until two are in flight, then a while longer before both are answered: a
    // run that broke its cap would have its further children arrive meanwhile and push the count past 2;
    // under the cap no third can arrive until one of the two is answered, however long that takes.
    gate: async (body) => {
      if (!isChild(body)) return;
      inFlight++;
      most = Math.max(most, inFlight);
      if (inFlight === 2) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        waiting.splice(0).forEach((wake) => wake());
      } else {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          waiting.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      inFlight--;
    },
    respond: (body): ScriptEntry => {
      if (isChild(body)) {
        return { content: `done: ${userOf(body)}`, usage: { prompt_tokens: 10, completion_tokens: 2 } };
      }
      if (toolMessages(body).length === 0) {
        return {
          tool_calls: [1, 2, 3, 4, 5, 6].map((n) => ({
            id: `call_${n}`,
            name: "delegate",
            arguments: { agent: "worker", prompt: `task ${n}` },
          })),
          usage: { prompt_tokens: 100, completion_tokens: 5 },
        };
      }
      return { content: "all done", usage: { prompt_tokens: 100, completion_tokens: 5 } };
    },
  });
  const dir = await jobDir(
    LEAD + `limits: { max_concurrent_agents: 2 }
agents:
  worker:
    description: Does one task
    system: You are a worker.
    tools: [read_file]
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir, { env: env(server.url, dir) });
    assert.equal(code, 0, stderr);
    assert.equal(most, 2, "at most 2 children were in a model call at once, and 2 were");
    const children = server.requests.filter(isChild);
    assert.equal(children.length, 6);
    // The child has the tool the agent names, not the parent's others; it may delegate in turn (depth 1 of 2).
    assert.deepEqual(toolNames(children[0]!), ["delegate", "read_file"]);
    const lead = server.requests.filter((b) => !isChild(b));
    assert.deepEqual(toolNames(lead[0]!), ["delegate", "list_dir", "read_file"]);
    // The tool results reach the parent in the order it made the calls, each the child's final answer.
    assert.deepEqual(
      toolMessages(lead[1]!).map((m) => [m.tool_call_id, textOf(m.content)]),
      [1, 2, 3, 4, 5, 6].map((n) => [`call_${n}`, `done: task ${n}`]),
    );

    const result = resultOf(events);
    const parentId = result.session_id;
    assert.equal(result.status, "success");
    const agents = result.agents!;
    const total = result.total!;
    assert.equal(agents.length, 6);
    assert.deepEqual(result.usage.prompt_tokens, 200);
    for (const agent of agents) {
      assert.equal(agent.name, "worker");
      assert.equal(agent.status, "success");
      assert.equal(agent.usage.prompt_tokens, 10);
    }
    const sum = (key: keyof Usage) => result.usage[key] + agents.reduce((n, a) => n + a.usage[key], 0);
    assert.equal(total.usage.prompt_tokens, sum("prompt_tokens"));
    assert.equal(total.usage.completion_tokens, sum("completion_tokens"));
    assert.equal(total.usage.prompt_tokens, 260);

    assert.equal(events.filter((e: Event) => e.type === "result").length, 1, "one result: the run's");
    assert.equal(
      new Set(events.filter((e: Event) => e.type === "session.start").map((e) => e.session_id)).size,
      7,
      "the children's events are in the stream under their own sessions",
    );
    const starts = events.filter((e: Event) => e.type === "agent.start" && e.session_id === parentId);
    const ends = events.filter((e: Event) => e.type === "agent.end" && e.session_id === parentId);
    assert.equal(starts.length, 6);
    assert.equal(ends.length, 6);
    assert.deepEqual(
      new Set(starts.map((e) => e.child_session_id)),
      new Set(agents.map((a) => a.session_id)),
    );

    // Each child is a session of its own under the parent.
    const listed = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
    assert.equal(listed.code, 0, listed.stderr);
    const sessions = JSON.parse(listed.stdout) as Record<string, unknown>[];
    const kids = sessions.filter((s) => s.parent_id === parentId);
    assert.equal(kids.length, 6);
    assert.ok(kids.every((s) => s.job === "lead.worker" && s.status === "success"));
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: a subagent naming a tool its job lacks is refused before any model call (exit 2, located)", async () => {
  const server = await startOpenAIServer({ script: [{ content: "never" }] });
  const dir = await jobDir(
    LEAD + `agents:
  worker:
    description: Does one task
    tools: [read_file, shell]
`,
  );
  try {
    const { code, stderr } = await runEvents(dir, { env: env(server.url, dir) });
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /job\.yaml:\d+:\d+: Cannot give agent "worker" the tool shell: the job's tools are read_file, list_dir/,
    );
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

for (const depth of [1, 2]) {
  Deno.test(`agents: max_agent_depth: ${depth} — a child's own delegation is ${depth === 1 ? "a tool error" : "run"}`, async () => {
    const server = await startOpenAIServer({
      respond: (body): ScriptEntry => {
        const tools = toolMessages(body);
        if (!isChild(body)) {
          return tools.length === 0
            ? { tool_calls: [{ name: "delegate", arguments: { agent: "worker", prompt: "outer" } }] }
            : { content: `lead got: ${textOf(tools[0]!.content)}` };
        }
        if (userOf(body) === "inner") return { content: "inner done" };
        return tools.length === 0
          ? { tool_calls: [{ name: "delegate", arguments: { agent: "worker", prompt: "inner" } }] }
          : { content: `outer got: ${textOf(tools[0]!.content)}` };
      },
    });
    const dir = await jobDir(
      LEAD + `limits: { max_agent_depth: ${depth} }
agents:
  worker: { description: Does one task, system: You are a worker. }
`,
    );
    try {
      const { code, stderr, events } = await runEvents(dir, { env: env(server.url, dir) });
      assert.equal(code, 0, stderr);
      const result = resultOf(events);
      if (depth === 1) {
        assert.match(
          result.final,
          /^lead got: outer got: error: Cannot delegate to "worker": this session is at depth 1 and limits\.max_agent_depth is 1/,
        );
        assert.equal(server.requests.filter((b) => userOf(b) === "inner").length, 0);
      } else {
        assert.equal(result.final, "lead got: outer got: inner done");
        // The grandchild's session is the child's child, and its usage reaches the root's total.
        const [child] = result.agents!;
        const childStart = events.find((e: Event) =>
          e.type === "agent.start" && e.session_id === child!.session_id
        )!;
        assert.equal(childStart.depth, 2);
      }
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("agents: a child whose model call fails is a tool error for the parent, which goes on to succeed", async () => {
  const server = await startOpenAIServer({
    respond: (body): ScriptEntry => {
      if (isChild(body)) return { error: { status: 400, message: "the child's request is refused" } };
      const tools = toolMessages(body);
      return tools.length === 0
        ? { tool_calls: [{ name: "delegate", arguments: { agent: "worker", prompt: "try" } }] }
        : { content: `lead saw: ${textOf(tools[0]!.content)}` };
    },
  });
  const dir = await jobDir(
    LEAD + `agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir, { env: env(server.url, dir) });
    assert.equal(code, 0, stderr);
    const result = resultOf(events);
    assert.equal(result.status, "success");
    assert.match(result.final, /^lead saw: error: agent "worker" \(session [^)]+\) ended failed \(/);
    assert.equal(result.agents![0]!.status, "failed");
    const toolResult = events.find((e: Event) => e.type === "tool.result" && e.tool === "delegate")!;
    assert.equal(toolResult.status, "error");
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: the parent's timeout stops its child mid-call; the child's session does not stay running", async () => {
  let free!: () => void;
  const held = new Promise<void>((resolve) => free = resolve);
  const server = await startOpenAIServer({
    gate: async (body) => {
      if (isChild(body)) await held;
    },
    respond: (body): ScriptEntry =>
      isChild(body)
        ? { content: "too late" }
        : { tool_calls: [{ name: "delegate", arguments: { agent: "worker", prompt: "slow" } }] },
  });
  const dir = await jobDir(
    LEAD + `limits: { timeout: 2s }
agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir, { env: env(server.url, dir) });
    assert.equal(code, 3, stderr);
    const result = resultOf(events);
    assert.equal(result.terminal_reason, "timeout");
    const listed = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
    const child = (JSON.parse(listed.stdout) as Record<string, unknown>[]).find((s) =>
      s.parent_id === result.session_id
    );
    assert.ok(child, "the child session exists");
    assert.notEqual(child.status, "running");
  } finally {
    free();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: a task working longer than the parent's stall bound does not stall the parent (its events are the parent's progress)", async () => {
  const server = await startOpenAIServer({
    respond: (body): ScriptEntry => {
      const tools = toolMessages(body);
      if (!isChild(body)) {
        return tools.length === 0
          ? { tool_calls: [{ name: "delegate", arguments: { agent: "worker", prompt: "long" } }] }
          : { content: `lead got: ${textOf(tools[0]!.content)}` };
      }
      // Each child call answers within its idle timeout; together they take longer than the parent's bound
      // (idle_timeout 1s + 5s slack) without a single event of the parent's own session.
      return tools.length < 9
        ? { delay: "800ms", tool_calls: [{ name: "list_dir", arguments: { path: "." } }] }
        : { content: "long done" };
    },
  });
  const dir = await jobDir(
    LEAD.replace("name: m }", "name: m, idle_timeout: 1s }") + `agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir, { env: env(server.url, dir) });
    assert.equal(code, 0, stderr);
    assert.equal(resultOf(events).final, "lead got: long done");
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: the parent's max_cost_usd holds for its tasks and itself together; a task is stopped once the tree's budget is gone", async () => {
  // $1 per million prompt tokens: the parent's call costs $0.01, each task's call $0.15 — each under the cap
  // of $0.25 on its own, the parent and two tasks together over it.
  const server = await startOpenAIServer({
    respond: (body): ScriptEntry => {
      if (isChild(body)) {
        return { content: `done: ${userOf(body)}`, usage: { prompt_tokens: 150_000, completion_tokens: 0 } };
      }
      return {
        tool_calls: [1, 2, 3].map((n) => ({
          id: `call_${n}`,
          name: "delegate",
          arguments: { agent: "worker", prompt: `task ${n}` },
        })),
        usage: { prompt_tokens: 10_000, completion_tokens: 0 },
      };
    },
  });
  const dir = await jobDir(
    LEAD.replace("name: m }", "name: m, pricing: { input: 1, output: 1 } }") +
      `limits: { max_cost_usd: 0.25, max_concurrent_agents: 1 }
agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir, { env: env(server.url, dir) });
    assert.equal(code, 3, stderr);
    const result = resultOf(events);
    assert.equal(result.terminal_reason, "max_cost");
    // Task 1 fits (0.16 of 0.25); task 2's answer takes the tree to 0.31 and stops it; task 3 is refused before
    // its first call is sent, and so is the parent's next call.
    assert.deepEqual(result.agents!.map((a) => [a.status, a.cost_usd]), [
      ["success", 0.15],
      ["limit", 0.15],
      ["limit", 0],
    ]);
    const tool = (id: string) =>
      events.find((e: Event) => e.type === "tool.result" && e.tool_call_id === id)!.content as string;
    assert.match(
      tool("call_2"),
      /ended limit \(max_cost\): Stopped after the delegating run and its tasks spent \$0\.31/,
    );
    assert.match(
      tool("call_3"),
      /ended limit \(max_cost\): Stopped before a model call .*the delegating run and its tasks had spent \$0\.31/,
    );
    assert.equal(server.requests.filter((b) => userOf(b) === "task 3").length, 0);
    assert.equal(
      server.requests.filter((b) => !isChild(b)).length,
      1,
      "the parent's second call is not sent",
    );
    assert.ok(Math.abs(result.total!.cost_usd! - 0.31) < 1e-9);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: cancelling the parent (SIGTERM) stops its tasks mid-call; they end interrupted, none stays running", async () => {
  let free!: () => void;
  const held = new Promise<void>((resolve) => free = resolve);
  let childCalls = 0;
  const server = await startOpenAIServer({
    gate: async (body) => {
      if (isChild(body)) {
        childCalls++;
        await held;
      }
    },
    respond: (body): ScriptEntry =>
      isChild(body) ? { content: "too late" } : {
        tool_calls: [1, 2].map((n) => ({
          name: "delegate",
          arguments: { agent: "worker", prompt: `slow ${n}` },
        })),
      },
  });
  const dir = await jobDir(
    LEAD + `agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  try {
    const child = spawnHermes(["run", "job.yaml", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: env(server.url, dir),
    });
    for (let i = 0; i < 1200 && childCalls < 2; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(childCalls, 2, "both tasks are in a model call");
    child.kill("SIGTERM");
    const { code, stdout, stderr } = await child.output();
    assert.equal(code, 143, new TextDecoder().decode(stderr));
    const result = JSON.parse(new TextDecoder().decode(stdout)) as RunResult;
    assert.equal(result.status, "interrupted");
    const listed = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
    const kids = (JSON.parse(listed.stdout) as Record<string, unknown>[]).filter((s) =>
      s.parent_id === result.session_id
    );
    assert.deepEqual(kids.map((s) => s.status), ["interrupted", "interrupted"]);
    assert.equal(server.requests.filter(isChild).length, 2, "no task made another call");
  } finally {
    free();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: OpenTelemetry — each task is an invoke_agent span named by its agent, under the delegate call that started it", async () => {
  const receiver = startOtlpReceiver();
  const server = await startOpenAIServer({
    respond: (body): ScriptEntry => {
      if (isChild(body)) return { content: `done: ${userOf(body)}` };
      return toolMessages(body).length === 0
        ? {
          tool_calls: [1, 2].map((n) => ({
            id: `call_${n}`,
            name: "delegate",
            arguments: { agent: "worker", prompt: `task ${n}` },
          })),
        }
        : { content: "all done" };
    },
  });
  const dir = await jobDir(
    LEAD + `agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir, {
      env: { ...env(server.url, dir), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    assert.equal(code, 0, stderr);
    const result = resultOf(events);
    const spans = receiver.spans;
    const named = (name: string) => spans.filter((s: ReceivedSpan) => s.name === name);
    const [lead] = named("invoke_agent lead");
    assert.ok(lead, spans.map((s) => s.name).join(", "));
    assert.equal(lead.parentSpanId, "");
    const delegates = named("execute_tool delegate");
    const tasks = named("invoke_agent worker");
    assert.equal(delegates.length, 2);
    assert.equal(tasks.length, 2);
    for (const task of tasks) {
      assert.equal(task.attributes["gen_ai.operation.name"], "invoke_agent");
      assert.equal(task.attributes["gen_ai.agent.name"], "worker");
      assert.equal(task.attributes["hermes.agent.depth"], 1);
      const agent = result.agents!.find((a) => a.session_id === task.attributes["gen_ai.conversation.id"]);
      assert.ok(agent, "the span is a task's session");
      // Under its own delegate call: the call whose tool.call id started it.
      const start = events.find((e: Event) =>
        e.type === "agent.start" && e.child_session_id === agent.session_id
      )!;
      const call = delegates.find((d) => d.attributes["gen_ai.tool.call.id"] === start.tool_call_id)!;
      assert.equal(task.parentSpanId, call.spanId);
      assert.ok(task.startMs >= call.startMs && task.endMs <= call.endMs, "inside its delegate call");
      // The task's own turn and model call are inside its span.
      const turn = spans.find((s) => s.name === "hermes.turn" && s.parentSpanId === task.spanId);
      assert.ok(turn, "the task's turn is under its span");
      assert.ok(spans.some((s) => s.name === "chat m" && s.parentSpanId === turn.spanId));
    }
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, "one trace for the run and its tasks");
  } finally {
    await receiver.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: `hermes runs cancel` of a queued run stops its tasks mid-call; none stays running", async () => {
  let free!: () => void;
  const held = new Promise<void>((resolve) => free = resolve);
  let childCalls = 0;
  const server = await startOpenAIServer({
    gate: async (body) => {
      if (isChild(body)) {
        childCalls++;
        await held;
      }
    },
    respond: (body): ScriptEntry =>
      isChild(body) ? { content: "too late" } : {
        tool_calls: [{ name: "delegate", arguments: { agent: "worker", prompt: "slow" } }],
      },
  });
  const dir = await jobDir(
    LEAD + `agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  const cli: typeof hermes = (args) => hermes(args, { cwd: dir, home: dir, env: env(server.url, dir) });
  const daemon = spawnHermes(["daemon"], { cwd: dir, home: dir, env: env(server.url, dir) });
  try {
    const submitted = await cli(["submit", "job.yaml"]);
    assert.equal(submitted.code, 0, submitted.stderr);
    const id = submitted.stdout.trim();
    for (let i = 0; i < 1200 && childCalls < 1; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(childCalls, 1, "the task is in a model call");
    const asked = await cli(["runs", "cancel", id]);
    assert.equal(asked.code, 0, asked.stderr);
    const ended = await cli(["runs", "wait", id, "--output", "json", "--timeout", "30s"]);
    assert.equal(ended.code, 130, ended.stderr);
    const result = JSON.parse(ended.stdout) as RunResult;
    const listed = await cli(["sessions", "list", "--json"]);
    const kids = (JSON.parse(listed.stdout) as Record<string, unknown>[]).filter((s) =>
      s.parent_id === result.session_id
    );
    assert.equal(kids.length, 1);
    assert.equal(kids[0]!.status, "interrupted");
    assert.equal(server.requests.filter(isChild).length, 1, "the task made no other call");
  } finally {
    free();
    daemon.kill("SIGTERM");
    await daemon.output();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: a model that reuses a call id in a later step gets a new task, not the earlier task's answer", async () => {
  const server = await startOpenAIServer({
    respond: (body): ScriptEntry => {
      if (isChild(body)) return { content: `done: ${userOf(body)}` };
      const tools = toolMessages(body);
      if (tools.length === 2) return { content: tools.map((m) => textOf(m.content)).join(" + ") };
      // Both steps' calls are call_0, as servers that number each reply's calls from 0 send them.
      return {
        tool_calls: [{
          id: "call_0",
          name: "delegate",
          arguments: { agent: "worker", prompt: tools.length ? "second" : "first" },
        }],
      };
    },
  });
  const dir = await jobDir(
    LEAD + `agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir, { env: env(server.url, dir) });
    assert.equal(code, 0, stderr);
    const result = resultOf(events);
    assert.equal(result.final, "done: first + done: second");
    assert.equal(result.agents!.length, 2);
    assert.notEqual(result.agents![0]!.session_id, result.agents![1]!.session_id);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
