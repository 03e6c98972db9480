/**
 * `hermes run` with `provider: anthropic` through the real CLI and the official SDK over HTTP, against the
 * scripted Anthropic server (tests/_testing/anthropic_server.ts): a tool round, streaming, each stop reason, 429/529
 * with retry-after, thinking blocks kept across a tool round and a resume, cache breakpoints present and
 * stable (also across a compaction), and `output.schema` through a forced answer tool.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { type AnthropicServer, startAnthropicServer, type WireBody } from "../_testing/anthropic_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

const KEY = "sk-ant-test-0123456789abcdef";

function job(extra = "", model = "") {
  return `name: claude\nmodel: { provider: anthropic, name: claude-test${model} }\n` +
    `system: You are terse.\nprompt: list the files\ntools:\n  list_dir: { paths: ["."] }\n${extra}`;
}

/** Runs the job in a fresh directory, the server's URL and key given as ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY. */
async function run(server: AnthropicServer, yaml: string, args: string[] = []) {
  const dir = await writeFiles(await tempDir(), { "job.yaml": yaml });
  const result = await runEvents(dir, {
    env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
    args,
  });
  return { ...result, dir, result: result.events.at(-1) as Record<string, unknown> };
}

type Block = { type: string } & Record<string, unknown>;
const blocks = (body: WireBody, index: number) => body.messages![index]!.content as Block[];

for (const stream of [false, true]) {
  Deno.test(`anthropic run (stream: ${stream}): a tool round, system and tools on the wire, key never printed`, async () => {
    await using server = await startAnthropicServer({
      apiKey: KEY,
      script: [
        { content: "Let me look.", tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
        { content: "There is a job file." },
      ],
    });
    const { code, stderr, events, result } = await run(server, job("", `, stream: ${stream}`));
    assert.equal(code, 0, stderr);
    assert.equal(result.final, "There is a job file.");
    assert.equal(result.terminal_reason, "completed");
    assert.match(String(events.find((e) => e.type === "tool.result")?.content), /job\.yaml/);
    assert.equal(server.records.length, 2);
    const [first, second] = server.records.map((r) => r.body);
    assert.equal(first!.stream ?? false, stream);
    assert.equal((first!.system as Block[])[0]!.text, "You are terse.");
    assert.deepEqual(first!.tools!.map((t) => t.name), ["list_dir"]);
    assert.ok("input_schema" in first!.tools![0]!);
    // The assistant's tool_use and the user's tool_result, paired by id.
    const assistant = blocks(second!, 1);
    assert.deepEqual(assistant.map((b) => b.type), ["text", "tool_use"]);
    const result2 = blocks(second!, 2)[0]!;
    assert.equal(result2.type, "tool_result");
    assert.equal(result2.tool_use_id, assistant[1]!.id);
    assert.ok(server.records.every((r) => r.headers.get("anthropic-version")));
    assert.doesNotMatch(JSON.stringify(events) + stderr, new RegExp(KEY));
  });
}

Deno.test("anthropic run: streamed text arrives in pieces and adds up to the answer", async () => {
  await using server = await startAnthropicServer({
    chunkChars: 3,
    script: [{ content: "Streaming works fine." }],
  });
  const dir = await writeFiles(await tempDir(), { "job.yaml": job("", ", stream: true") });
  const { code, stdout, stderr } = await hermes(["run", "job.yaml"], {
    cwd: dir,
    home: dir,
    env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
  });
  assert.equal(code, 0, stderr);
  assert.equal(stdout.trim(), "Streaming works fine.");
  assert.equal(server.records[0]!.body.stream, true);
});

const STOPS: [string, string, number, string][] = [
  ["end_turn", "completed", 0, "success"],
  ["max_tokens", "output_truncated", 1, "failed"],
  ["refusal", "content_filtered", 1, "failed"],
  ["model_context_window_exceeded", "output_truncated", 1, "failed"],
];
for (const [stop, reason, exit, status] of STOPS) {
  Deno.test(`anthropic run: stop_reason ${stop} ends ${reason} (exit ${exit})`, async () => {
    await using server = await startAnthropicServer([{
      content: "An answer",
      wire: { finish_reason: stop },
    }]);
    const { code, result, stderr } = await run(server, job("", ", stream: true"));
    assert.equal(code, exit, stderr);
    assert.equal(result.terminal_reason, reason);
    assert.equal(result.status, status);
  });
}

Deno.test("anthropic run: pause_turn is continued by sending the paused reply back", async () => {
  await using server = await startAnthropicServer([
    { content: "Part one, ", wire: { finish_reason: "pause_turn" } },
    { content: "part two." },
  ]);
  const { code, result, stderr } = await run(server, job("", ", stream: true"));
  assert.equal(code, 0, stderr);
  assert.equal(result.final, "Part one, part two.");
  const continued = server.records[1]!.body;
  const last = continued.messages!.at(-1)!;
  assert.equal(last.role, "assistant");
  assert.equal((last.content as Block[])[0]!.text, "Part one, ");
  assert.equal(result.turns, 1);
});

Deno.test("anthropic run: 429 and 529 with retry-after are retried, the waits honoured", async () => {
  await using server = await startAnthropicServer([
    { error: { status: 429, message: "Number of requests has exceeded your rate limit", retry_after: 1 } },
    { error: { status: 529, message: "Overloaded", retry_after: 0 } },
    { content: "done after retries" },
  ]);
  const started = performance.now();
  const { code, events, result, stderr } = await run(server, job());
  assert.equal(code, 0, stderr);
  assert.equal(result.final, "done after retries");
  const retries = events.filter((e) => e.type === "provider.retry");
  assert.deepEqual(retries.map((e) => [e.status, e.delay_ms]), [[429, 1000], [529, 0]]);
  assert.match(String(retries[1]!.error), /overloaded_error/);
  // The one-second retry-after was waited out (a generous bound below, none above).
  assert.ok(performance.now() - started >= 1000);
});

Deno.test("anthropic run: 529 until the retries run out ends rate_limited, exit 1", async () => {
  const overloaded = { error: { status: 529, message: "Overloaded", retry_after: 0 } };
  await using server = await startAnthropicServer([overloaded, overloaded, overloaded]);
  const { code, result } = await run(server, job("", ", max_retries: 2"));
  assert.equal(code, 1);
  assert.equal(result.terminal_reason, "rate_limited");
  assert.match(String(result.error), /HTTP 529 Overloaded .*after 2 retries/);
  assert.equal(server.records.length, 3);
});

Deno.test("anthropic run: a wrong key is a 401, not retried, exit 1", async () => {
  await using server = await startAnthropicServer({ apiKey: "another-key", script: [{ content: "never" }] });
  const { code, result } = await run(server, job());
  assert.equal(code, 1);
  assert.match(String(result.error), /HTTP 401/);
  assert.equal(server.records.length, 1);
});

Deno.test("anthropic run: thinking blocks and their signatures go back across a tool round and a resume", async () => {
  await using server = await startAnthropicServer([
    {
      thinking: "The user wants files; list the directory.",
      tool_calls: [{ name: "list_dir", arguments: {} }],
    },
    { thinking: "I see job.yaml.", content: "There is a job file." },
    { thinking: "Still one file.", content: "Still just the job file." },
  ]);
  const yaml = job("", ", stream: true, max_output_tokens: 4096, thinking: { budget_tokens: 2048 }");
  const { code, result, dir, stderr } = await run(server, yaml);
  assert.equal(code, 0, stderr);
  assert.equal(result.final, "There is a job file.");
  const second = server.records[1]!.body;
  assert.deepEqual(second.thinking, { type: "enabled", budget_tokens: 2048 });
  const round = blocks(second, 1);
  assert.equal(round[0]!.type, "thinking");
  assert.equal(round[0]!.thinking, "The user wants files; list the directory.");
  assert.ok(String(round[0]!.signature).length > 20);
  // A later process reads the blocks back from the store: the resumed request carries them unchanged.
  const resumed = await hermes(
    ["run", "--resume", String(result.session_id), "-p", "and now?", "--output", "json"],
    { cwd: dir, home: dir, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url } },
  );
  assert.equal(resumed.code, 0, resumed.stderr);
  const third = server.records[2]!.body;
  assert.equal(server.records[2]!.status, 200);
  const assistants = third.messages!.filter((m) => m.role === "assistant").map((m) =>
    (m.content as Block[])[0]
  );
  assert.deepEqual(assistants.map((b) => b!.thinking), [
    "The user wants files; list the directory.",
    "I see job.yaml.",
  ]);
});

Deno.test("anthropic run: a thinking block changed on its way back is refused by the server (the check can fail)", async () => {
  await using server = await startAnthropicServer({
    script: [{ thinking: "plan", tool_calls: [{ name: "list_dir", arguments: {} }] }, { content: "never" }],
  });
  const { signThinking } = await import("../_testing/anthropic_server.ts");
  assert.notEqual(await signThinking("plan"), await signThinking("plan!"));
  const body = {
    model: "m",
    max_tokens: 4096,
    thinking: { type: "enabled", budget_tokens: 2048 },
    messages: [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: [{ type: "thinking", thinking: "plan!", signature: await signThinking("plan") }, {
          type: "tool_use",
          id: "t1",
          name: "list_dir",
          input: {},
        }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "x" }] },
    ],
  };
  const response = await fetch(`${server.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 400);
  assert.match((await response.json()).error.message, /Invalid `signature`/);
});

/** A model that lists the directory once per user turn, then answers; summary calls get a summary. */
function agentModel(body: WireBody): ScriptEntry {
  if (!body.tools?.length) {
    return { content: "## Goal\nlist files\n## Progress\nlisted the directory several times" };
  }
  const last = body.messages!.at(-1)!;
  const afterTool = Array.isArray(last.content) && last.content.some((b) => b.type === "tool_result");
  return afterTool
    ? { content: `Answer ${body.messages!.length}: there is a job file and some notes. ${"x".repeat(400)}` }
    : { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] };
}

Deno.test("anthropic run: cache breakpoints on tools+system, head and the moving end; reads grow, prefix stable", async () => {
  await using server = await startAnthropicServer({ respond: agentModel });
  const steps = "steps:\n  - again please\n  - once more\n  - and a last time\n";
  const { code, result, stderr } = await run(server, job(steps));
  assert.equal(code, 0, stderr);
  const answered = server.records.filter((r) => r.status === 200);
  assert.equal(answered.length, 8);
  for (const { cache } of answered) assert.ok(cache!.breakpoints.length <= 4);
  const first = answered[0]!.cache!;
  assert.deepEqual(first.breakpoints.map((b) => b.where), ["system.0", "messages.0.content.0"]);
  // The tools+system prefix and the head hash the same in every request.
  for (const { cache } of answered) {
    assert.equal(cache!.breakpoints[0]!.where, "system.0");
    assert.equal(cache!.breakpoints[0]!.prefix, first.breakpoints[0]!.prefix);
    assert.equal(cache!.breakpoints[1]!.prefix, first.breakpoints[1]!.prefix);
  }
  // From the second request on, everything up to the previous request's end is read from the cache.
  for (const [i, { cache }] of answered.entries()) {
    if (i === 0) continue;
    const previousEnd = answered[i - 1]!.cache!.breakpoints.at(-1)!.tokens;
    assert.equal(cache!.cache_read_input_tokens, previousEnd, `request ${i}`);
  }
  const reads = answered.reduce((n, r) => n + r.cache!.cache_read_input_tokens, 0);
  const writes = answered.reduce((n, r) => n + r.cache!.cache_creation_input_tokens, 0);
  const usage = result.usage as Record<string, number>;
  assert.equal(usage.cached_tokens, reads);
  assert.equal(usage.cache_write_tokens, writes);
  assert.equal(usage.prompt_tokens, answered.reduce((n, r) => n + r.cache!.total_tokens, 0));
});

Deno.test("anthropic run: after /compress the tools+system and head breakpoints still hit the cache", async () => {
  await using server = await startAnthropicServer({ respond: agentModel });
  const steps = "steps:\n  - again please\n  - once more\n  - /compress\n  - after the compaction\n";
  const compaction = "compaction: { protect_first: 2, protect_last: 2, summary_model: claude-test }\n";
  const { code, events, stderr } = await run(server, job(steps + compaction));
  assert.equal(code, 0, stderr);
  assert.ok(events.some((e) => e.type === "compaction"), "no compaction happened");
  const agent = server.records.filter((r) => r.status === 200 && r.body.tools?.length);
  const before = agent.at(-3)!.cache!;
  const after = agent.at(-2)!.cache!; // the first request after the compaction
  assert.equal(after.breakpoints[0]!.prefix, before.breakpoints[0]!.prefix);
  assert.equal(after.breakpoints[1]!.prefix, before.breakpoints[1]!.prefix);
  // The stable prefix (at least tools, system and head) is read; the rewritten middle misses and is written.
  assert.ok(after.cache_read_input_tokens >= before.breakpoints[1]!.tokens);
  assert.ok(after.cache_read_input_tokens < before.breakpoints.at(-1)!.tokens);
  assert.ok(after.cache_creation_input_tokens > 0);
});

Deno.test("anthropic run: output.schema is answered through a forced tool and validated", async () => {
  await using server = await startAnthropicServer([
    { tool_calls: [{ name: "final_answer", arguments: { labels: ["bug", "ui"] } }] },
  ]);
  const yaml = "name: labels\nmodel: { provider: anthropic, name: claude-test }\nprompt: label it\n" +
    "output:\n  schema: { type: object, required: [labels], properties: { labels: { type: array } } }\n";
  const { code, result, stderr } = await run(server, yaml);
  assert.equal(code, 0, stderr);
  assert.deepEqual(result.output, { labels: ["bug", "ui"] });
  const body = server.records[0]!.body;
  assert.deepEqual(body.tool_choice, { type: "tool", name: "final_answer" });
  assert.deepEqual((body.tools![0] as unknown as { input_schema: unknown }).input_schema, {
    type: "object",
    required: ["labels"],
    properties: { labels: { type: "array" } },
  });
});

Deno.test("anthropic run: an answer through the forced tool that misses the schema still fails the run", async () => {
  await using server = await startAnthropicServer([
    { tool_calls: [{ name: "final_answer", arguments: { other: 1 } }] },
    { tool_calls: [{ name: "final_answer", arguments: { still: "wrong" } }] },
  ]);
  const yaml = "name: labels\nmodel: { provider: anthropic, name: claude-test }\nprompt: label it\n" +
    "output:\n  schema: { type: object, required: [labels], properties: { labels: { type: array } } }\n";
  const { code, result } = await run(server, yaml);
  assert.equal(code, 1);
  assert.equal(result.terminal_reason, "schema_mismatch");
});

Deno.test("anthropic run: no ANTHROPIC_API_KEY is exit 2 before any request", async () => {
  await using server = await startAnthropicServer([{ content: "never" }]);
  const dir = await writeFiles(await tempDir(), { "job.yaml": job() });
  const { code, stderr } = await hermes(["run", "job.yaml"], {
    cwd: dir,
    home: dir,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "" },
  });
  assert.equal(code, 2);
  assert.match(stderr, /ANTHROPIC_API_KEY/);
  assert.equal(server.records.length, 0);
});

Deno.test("anthropic run: a thinking budget not below max_output_tokens, or thinking on openai, is exit 2", async () => {
  await using server = await startAnthropicServer([{ content: "never" }]);
  const tooSmall = await run(server, job("", ", max_output_tokens: 2048, thinking: { budget_tokens: 4096 }"));
  assert.equal(tooSmall.code, 2);
  assert.match(
    tooSmall.stderr,
    /max_output_tokens \(2048\) must be larger than thinking\.budget_tokens \(4096\)/,
  );
  const openai = await run(
    server,
    "name: o\nmodel: { name: gpt-test, api_key_env: none, thinking: { budget_tokens: 2048 } }\nprompt: hi\n",
  );
  assert.equal(openai.code, 2);
  assert.match(openai.stderr, /model\.thinking needs provider: anthropic/);
  assert.equal(server.records.length, 0);
  // The allowed case runs.
  const ok = await run(server, job("", ", max_output_tokens: 8192, thinking: { budget_tokens: 4096 }"));
  assert.equal(ok.code, 0, ok.stderr);
});
