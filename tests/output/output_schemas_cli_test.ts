/**
 * Real output against the published schemas (schemas/*.schema.json): every `--output stream-json` line,
 * every `--output json` result and every RPC event notification and result of real `hermes` processes —
 * tool calls, denials, retries, compaction, loops, commands, and results of exit 0, 1, 2 and 3.
 */
import assert from "node:assert/strict";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { outputSchemas } from "../_testing/output_schemas.ts";
import { RpcClient } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const schemas = await outputSchemas();

function assertEvents(events: Record<string, unknown>[], expected: string[]): void {
  assert.ok(events.length > 0, "no events");
  for (const [i, event] of events.entries()) {
    assert.deepEqual(schemas.event(event), [], `event ${i}: ${JSON.stringify(event)}`);
    assert.equal(event.schema_version, 1);
  }
  const seen = new Set(events.map((e) => e.type));
  assert.deepEqual(expected.filter((type) => !seen.has(type)), [], `event types seen: ${[...seen]}`);
}

function assertResult(result: unknown): void {
  assert.deepEqual(schemas.result(result), [], JSON.stringify(result));
}

Deno.test("stream-json: a run with a retry, tool calls, a denial, sandbox off, a command and a loop", async () => {
  const server = await startOpenAIServer([
    { error: { status: 429, message: "slow down", retry_after: 0 } },
    {
      tool_calls: [
        { name: "read_file", arguments: { path: "notes.txt" } },
        { name: "shell", arguments: { command: "rm -rf notes.txt" } },
        { name: "shell", arguments: { command: "echo hi" } },
      ],
    },
    { content: "The notes say hello." },
    { content: "tick one" },
    { content: "tick two" },
  ]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: everything
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY }
prompt: read the notes
steps: ["/status", "/loop 1s check again --times 2"]
tools:
  read_file: { paths: ["."] }
  shell: { allow: ["echo *"], sandbox: off }
loops: { min_interval: 2s }
`,
      "notes.txt": "hello\n",
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    assertEvents(events, [
      "session.start",
      "turn.start",
      "message",
      "provider.retry",
      "tool.call",
      "tool.result",
      "tool.denied",
      "sandbox",
      "command",
      "interval.raised",
      "loop.tick",
      "loop.end",
      "turn.end",
      "session.end",
      "result",
    ]);
    const result = events.at(-1)!;
    assert.equal(result.type, "result");
    assert.equal(result.terminal_reason, "loop_done");
    assert.equal(result.sandbox, "off");
  } finally {
    await server.close();
  }
});

Deno.test("stream-json: a session that compacts (OpenAI-compatible server, small window)", async () => {
  const bulky = (i: number) => `Finding ${i}: ` + "the build log shows a long list of warnings. ".repeat(60);
  const turns: ScriptEntry[] = [];
  for (let i = 0; i <= 3; i++) {
    turns.push({ tool_calls: [{ name: "read_file", arguments: { path: "build.log" } }] });
    turns.push({ content: bulky(i) });
  }
  const summaries: ScriptEntry[] = Array.from({ length: 10 }, () => ({
    match: "<messages>",
    content: "Goal: triage the build. Progress: findings recorded. Next: keep going.",
  }));
  const server = await startOpenAIServer([...summaries, ...turns]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: long
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: 2000 }
prompt: look at the build
steps: ["look again", "and again", "once more"]
tools:
  read_file: { paths: ["."] }
compaction: { threshold: 0.75, protect_first: 1, protect_last: 4 }
`,
      "build.log": "warning: deprecated API in use\n".repeat(40),
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    assertEvents(events, ["compaction.start", "compaction", "tool.call", "tool.result", "result"]);
  } finally {
    await server.close();
  }
});

Deno.test("stream-json: summary calls that fail (compaction.blocked, the fallback) and a heartbeat that hits the timeout (exit 3)", async () => {
  const bulky = (i: number) => `Finding ${i}: ` + "the build log shows a long list of warnings. ".repeat(60);
  const turns: ScriptEntry[] = [];
  for (let i = 0; i <= 3; i++) {
    turns.push({ tool_calls: [{ name: "read_file", arguments: { path: "build.log" } }] });
    turns.push({ content: bulky(i) });
  }
  const summaries: ScriptEntry[] = Array.from({ length: 10 }, () => ({
    match: "<messages>",
    error: { status: 400, message: "summaries are not allowed here" },
  }));
  const server = await startOpenAIServer([...summaries, ...turns]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "compacting/job.yaml": `name: failing-summaries
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: 2000 }
prompt: look at the build
steps: ["look again", "and again", "once more"]
tools:
  read_file: { paths: ["."] }
compaction: { threshold: 0.75, protect_first: 1, protect_last: 4 }
`,
      "compacting/build.log": "warning: deprecated API in use\n".repeat(40),
      "beating/job.yaml": `name: beats
model: { provider: scripted, script: ./r.yaml }
prompt: start
steps: ["/heartbeat every 1s check the queue"]
heartbeat: { min_interval: 1s }
limits: { timeout: 2500ms }
`,
      "beating/r.yaml": Array.from({ length: 6 }, (_, i) => `- content: beat ${i}\n`).join(""),
    });
    const [compacting, beating] = await Promise.all([
      runEvents(`${dir}/compacting`, { env: { TEST_KEY: "k" } }),
      runEvents(`${dir}/beating`),
    ]);
    assert.equal(compacting.code, 0, compacting.stderr);
    assertEvents(compacting.events, ["compaction.start", "compaction.blocked", "result"]);
    assert.equal(beating.code, 3, beating.stderr);
    assertEvents(beating.events, ["heartbeat.tick", "command", "result"]);
    assert.equal(beating.events.at(-1)!.terminal_reason, "timeout");
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "stream-json: an MCP server that does not start (not required) is an mcp.error event",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: m\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n" +
      "mcp_servers:\n  gone: { command: /nonexistent/mcp-server, startup_timeout: 2s }\n",
    "r.yaml": "- content: went on\n",
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assertEvents(events, ["mcp.error", "session.start", "result"]);
});

const scriptedJob = (extra = "") =>
  `name: outcomes\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: label the issues\n${extra}` +
  `tools:\n  list_dir: { paths: ["."] }\n`;
const schema = "output: { schema: { type: object, required: [labels] } }\n";

Deno.test("--output json and stream-json: results of exit 0, 1, 2 and 3 match the result schema", async () => {
  const cases = [
    {
      name: "success",
      code: 0,
      job: scriptedJob(schema),
      replies: '- content: \'{"labels": ["bug"]}\'\n',
    },
    {
      name: "schema mismatch",
      code: 1,
      job: scriptedJob(schema),
      replies: "- content: no labels\n- content: still none\n",
    },
    {
      name: "max_turns",
      code: 3,
      job: scriptedJob("limits: { max_turns: 1 }\n"),
      replies: "- tool_calls: [{ name: list_dir, arguments: { path: . } }]\n- content: done\n",
    },
    {
      name: "invalid input",
      code: 2,
      job: scriptedJob(),
      replies: "- content: never\n",
      args: ["-i", "nope=1"],
    },
  ];
  await Promise.all(cases.map(async (c) => {
    const dir = await writeFiles(await tempDir(), { "job.yaml": c.job, "r.yaml": c.replies });
    for (const format of ["json", "stream-json"]) {
      const run = await hermes(["run", "job.yaml", "--output", format, ...(c.args ?? [])], {
        cwd: dir,
        home: `${dir}/${format}`,
      });
      assert.equal(run.code, c.code, `${c.name} (${format}): ${run.stderr}`);
      const lines = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
      if (format === "json") {
        assert.equal(lines.length, 1, `${c.name}: one object`);
        assertResult(lines[0]);
      } else assertEvents(lines, ["result"]);
      const result = lines.at(-1)!;
      // The stream-json result line carries seq and ts too, and is still a result object.
      assertResult(result);
      assert.equal(result.exit_code, c.code, c.name);
      assert.equal(result.schema_version, 1);
      if (c.code === 0) assert.deepEqual(result.output, { labels: ["bug"] });
    }
  }));
});

Deno.test("rpc: event notifications and the results of session.prompt and job.run match the schemas", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": scriptedJob(),
    "r.yaml": "- tool_calls: [{ name: list_dir, arguments: { path: . } }]\n- content: listed\n" +
      "- content: second\n- content: from job.run\n",
  });
  await using client = new RpcClient({ home: dir, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  const id = (created.result as { session_id: string }).session_id;
  const prompted = await client.request("session.prompt", { session_id: id, text: "list" });
  assertResult(prompted.result);
  const again = await client.request("session.prompt", { session_id: id, text: "/status" });
  assertResult(again.result);
  const ran = await client.request("job.run", { path: "job.yaml" });
  assertResult(ran.result);
  assert.equal((ran.result as { status: string }).status, "success", JSON.stringify(ran));
  assertEvents(client.events(), [
    "session.start",
    "message",
    "tool.call",
    "tool.result",
    "command",
    "turn.end",
    "result",
  ]);
  const { code } = await client.finish();
  assert.equal(code, 0);
});
