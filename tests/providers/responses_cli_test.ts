/**
 * `model.api: responses` through the real CLI and the openai SDK's `responses` client, against the scripted
 * Responses server (tests/_testing/responses_server.ts): a 12-round tool session, streamed and not, resumed once in
 * the middle, whose every request carries all earlier reasoning items (encrypted content) and function
 * calls and their outputs in order; usage as the server reported it; `output.schema` as a strict
 * `text.format`; every ending mapped to Hermes's terminal reasons; `model.api: auto` by model name; Azure.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import {
  type ResponsesBody,
  type ResponsesReply,
  sealed,
  startResponsesServer,
} from "../_testing/responses_server.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const schema = {
  type: "object",
  properties: { files: { type: "integer" }, verdict: { type: "string" } },
  required: ["files", "verdict"],
  additionalProperties: false,
};

function job(url: string, model: string, extra = "") {
  return `name: codex\nmodel: { name: ${model}, base_url: "${url}", api_key_env: none${extra} }\n` +
    `system: You are terse.\nprompt: look around\ntools:\n  list_dir: { paths: ["."] }\n`;
}

/** Each item of a request's input as `type:id`, messages as `role`. */
function shape(body: ResponsesBody): string[] {
  return (body.input ?? []).map((item) => {
    if (item.type === "reasoning") return `reasoning:${item.id}`;
    if (item.type === "function_call") return `function_call:${item.call_id}`;
    if (item.type === "function_call_output") return `function_call_output:${item.call_id}`;
    return String(item.role);
  });
}

/** What request `k` must carry, given which replies (by index) were final answers and where prompts came. */
function expectedShape(k: number): string[] {
  const out = ["system", "user"];
  for (let j = 0; j < k; j++) {
    out.push(`reasoning:rs_${j + 1}`);
    if (j % 6 === 5) {
      out.push("assistant");
      out.push("user"); // the resumed run's prompt
    } else {
      out.push(`function_call:call_${j + 1}_1`, `function_call_output:call_${j + 1}_1`);
    }
  }
  return out;
}

function sum(
  usages: {
    input_tokens: number;
    output_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens_details: { reasoning_tokens: number };
  }[],
) {
  return {
    prompt_tokens: usages.reduce((n, u) => n + u.input_tokens, 0),
    completion_tokens: usages.reduce((n, u) => n + u.output_tokens, 0),
    cached_tokens: usages.reduce((n, u) => n + u.input_tokens_details.cached_tokens, 0),
    cache_write_tokens: 0,
    reasoning_tokens: usages.reduce((n, u) => n + u.output_tokens_details.reasoning_tokens, 0),
  };
}

for (const stream of [false, true]) {
  Deno.test(`responses (stream: ${stream}): 12 tool rounds across a resume carry every reasoning item and call in order; usage and schema hold`, async () => {
    // Five tool rounds, then a structured answer; the same again after the resume.
    const reply = (_body: ResponsesBody, index: number): ResponsesReply => ({
      reasoning: `round ${index + 1}: ${index % 6 === 5 ? "answer now" : "look again"}`,
      ...(index % 6 === 5
        ? { content: JSON.stringify({ files: 1, verdict: `pass ${Math.floor(index / 6) + 1}` }) }
        : { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] }),
      usage: {
        input_tokens: 300 + 40 * index,
        output_tokens: 20 + index,
        cached_tokens: 128 * index,
        reasoning_tokens: 7 + index,
      },
    });
    await using server = await startResponsesServer({ respond: reply });
    const yaml =
      job(server.url, "gpt-5-codex", `, stream: ${stream}, max_output_tokens: 4000, reasoning_effort: high`) +
      `output:\n  schema: ${JSON.stringify(schema)}\n`;
    const dir = await writeFiles(await tempDir(), { "job.yaml": yaml });
    const first = await runEvents(dir);
    assert.equal(first.code, 0, first.stderr);
    const result = first.events.at(-1)!;
    assert.deepEqual(result.output, { files: 1, verdict: "pass 1" });
    assert.equal(server.requests.length, 6);
    assert.deepEqual(result.usage, sum(server.usages.slice(0, 6)));

    const resumed = await hermes(
      ["run", "--resume", String(result.session_id), "-p", "look once more", "--output", "stream-json"],
      { cwd: dir, home: dir },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    const second = resumed.stdout.trim().split("\n").map((line) => JSON.parse(line)).at(-1)!;
    assert.deepEqual(second.output, { files: 1, verdict: "pass 2" });
    assert.equal(server.requests.length, 12);
    assert.deepEqual(second.usage, sum(server.usages.slice(6, 12)));

    assert.deepEqual(server.statuses, Array(12).fill(200));
    server.requests.forEach((body, k) => {
      assert.deepEqual(shape(body), expectedShape(k), `request ${k + 1}`);
      assert.equal(body.stream ?? false, stream);
      assert.equal(body.store, false);
      assert.deepEqual(body.include, ["reasoning.encrypted_content"]);
      assert.deepEqual(body.reasoning, { effort: "high" });
      assert.equal(body.max_output_tokens, 4000);
      assert.deepEqual(body.text, {
        format: { type: "json_schema", name: "final_answer", schema, strict: true },
      });
      assert.deepEqual((body.tools as { name: string; type: string }[]).map((t) => [t.type, t.name]), [[
        "function",
        "list_dir",
      ]]);
    });
    // The reasoning goes back byte for byte as issued (the server checks the encrypted content too).
    const last = server.requests[11]!.input!.filter((item) => item.type === "reasoning");
    assert.equal(last.length, 11);
    assert.equal(last[0]!.encrypted_content, sealed(1, "round 1: look again"));
    assert.deepEqual(last[0]!.summary, [{ type: "summary_text", text: "round 1: look again" }]);
    // Tool outputs are the tool's results, paired by call id.
    const outputs = server.requests[11]!.input!.filter((item) => item.type === "function_call_output");
    assert.equal(outputs.length, 10);
    assert.match(String(outputs[0]!.output), /job\.yaml/);
    await Deno.remove(dir, { recursive: true });
  });
}

Deno.test("responses: a reasoning item changed or dropped on its way back is refused by the server (the check can fail)", async () => {
  const { requestProblem } = await import("../_testing/responses_server.ts");
  const issued = new Map([["rs_1", "secret-1"]]);
  const callReasoning = new Map([["call_1_1", ["rs_1"]]]);
  const state = { issued, callReasoning };
  const call = { type: "function_call", call_id: "call_1_1", name: "list_dir", arguments: "{}" };
  const output = { type: "function_call_output", call_id: "call_1_1", output: "x" };
  const reasoning = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "secret-1" };
  const body = (input: Record<string, unknown>[]) => ({ model: "gpt-5-codex", store: false, input });
  assert.equal(
    requestProblem(body([{ role: "user", content: "hi" }, reasoning, call, output]), state),
    undefined,
  );
  assert.match(
    requestProblem(body([{ role: "user", content: "hi" }, call, output]), state)!,
    /without its required 'reasoning' item/,
  );
  assert.match(
    requestProblem(body([{ ...reasoning, encrypted_content: "forged" }, call, output]), state)!,
    /could not be verified/,
  );
  assert.match(
    requestProblem(body([{ type: "reasoning", id: "rs_1", summary: [] }]), state)!,
    /not persisted/,
  );
  assert.match(requestProblem(body([output]), state)!, /No tool call found/);
});

async function endingRun(replies: ResponsesReply[], extra = "") {
  await using server = await startResponsesServer({ script: replies });
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, "o3-pro", `, max_retries: 2${extra}`),
  });
  const run = await runEvents(dir);
  await Deno.remove(dir, { recursive: true });
  return { ...run, result: run.events.at(-1)!, requests: server.requests.length };
}

for (const stream of [false, true]) {
  const extra = `, stream: ${stream}`;
  Deno.test(`responses (stream: ${stream}): endings map to terminal reasons`, async () => {
    const truncated = await endingRun([{ content: "half an ans", ending: "max_output_tokens" }], extra);
    assert.equal(truncated.code, 1, truncated.stderr);
    assert.equal(truncated.result.terminal_reason, "output_truncated");
    const filtered = await endingRun([{ content: "", ending: "content_filter" }], extra);
    assert.equal(filtered.result.terminal_reason, "content_filtered");
    const refused = await endingRun([{ refusal: "I can't help with that." }], extra);
    assert.equal(refused.result.terminal_reason, "content_filtered");
    const done = await endingRun([{ content: "all good" }], extra);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.result.terminal_reason, "completed");
    assert.equal(done.result.final, "all good");
  });

  Deno.test(`responses (stream: ${stream}): a failed response is retried when its error is transient, not otherwise`, async () => {
    const retried = await endingRun([
      { ending: "failed", failure: { code: "server_error", message: "The server had an error." } },
      { content: "second time lucky" },
    ], extra);
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(retried.result.final, "second time lucky");
    assert.equal(retried.events.filter((e) => e.type === "provider.retry").length, 1);
    const fatal = await endingRun([
      { ending: "failed", failure: { code: "invalid_prompt", message: "Invalid prompt: flagged." } },
      { content: "never" },
    ], extra);
    assert.equal(fatal.code, 1);
    assert.equal(fatal.result.terminal_reason, "provider_error");
    assert.match(String(fatal.result.error), /Invalid prompt: flagged/);
    assert.equal(fatal.requests, 1);
  });
}

Deno.test("responses (stream): a stream cut before its terminal event is retried", async () => {
  const run = await endingRun(
    [{ tool_calls: [{ name: "list_dir" }], cut_after: 4 }, { content: "whole" }],
    ", stream: true",
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.result.final, "whole");
  assert.equal(run.requests, 2);
});

Deno.test("model.api: auto asks Responses for a Responses-only model and Chat Completions for others; chat overrides", async () => {
  await using responses = await startResponsesServer({ script: [{ content: "from responses" }] });
  await using chat = await startOpenAIServer({
    script: [{ content: "from chat" }, { content: "chat again" }],
  })
    .then((s) => Object.assign(s, { [Symbol.asyncDispose]: () => s.close() }));
  const run = async (url: string, model: string, extra = "") => {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(url, model, extra) });
    const outcome = await runEvents(dir);
    await Deno.remove(dir, { recursive: true });
    return outcome;
  };
  const codex = await run(responses.url, "gpt-5.1-codex-max");
  assert.equal(codex.code, 0, codex.stderr);
  assert.equal(codex.events.at(-1)!.final, "from responses");
  const classic = await run(chat.url, "gpt-4.1");
  assert.equal(classic.events.at(-1)!.final, "from chat");
  const forced = await run(chat.url, "gpt-5-codex", ", api: chat");
  assert.equal(forced.events.at(-1)!.final, "chat again");
  assert.equal(chat.requests.length, 2);
  assert.equal(responses.requests.length, 1);
});

Deno.test("model.api belongs to providers openai and azure: another provider's job is exit 2", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      "name: x\nmodel: { provider: anthropic, name: claude-sonnet-4-5, api: responses }\nprompt: hi\n",
  });
  const { code, stderr } = await hermes(["run", "job.yaml"], {
    cwd: dir,
    home: dir,
    env: { ANTHROPIC_API_KEY: "k" },
  });
  assert.equal(code, 2);
  assert.match(stderr, /model\.api needs provider: openai or azure \(provider is anthropic\)/);
  const bad = await writeFiles(dir, {
    "job.yaml": "name: x\nmodel: { name: gpt-5, api: messages }\nprompt: hi\n",
  });
  const refused = await hermes(["run", "job.yaml"], { cwd: bad, home: bad });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /model\.api/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("azure with model.api: responses posts to /openai/responses with the Responses api-version and the api-key header", async () => {
  const key = "azure-key-0123456789";
  await using server = await startResponsesServer({
    azure: { apiKey: key, apiVersion: "2025-04-01-preview" },
    script: [{ tool_calls: [{ name: "list_dir" }] }, { content: "deployed" }],
  });
  const endpoint = server.url.replace(/\/v1$/, "");
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      `name: az\nmodel: { provider: azure, name: my-codex, base_url: "${endpoint}", api: responses }\n` +
      `prompt: look\ntools:\n  list_dir: { paths: ["."] }\n`,
  });
  const { code, stderr, events } = await runEvents(dir, { env: { AZURE_OPENAI_API_KEY: key } });
  assert.equal(code, 0, stderr);
  assert.equal(events.at(-1)!.final, "deployed");
  assert.deepEqual(server.urls, Array(2).fill("/openai/responses?api-version=2025-04-01-preview"));
  assert.equal(server.requests[0]!.model, "my-codex");
  assert.doesNotMatch(JSON.stringify(events) + stderr, new RegExp(key));
  await Deno.remove(dir, { recursive: true });
});

const SUMMARY = [
  "## Goal\nLook around the directory.",
  "## Constraints\nnone",
  "## Progress\nRead five files.",
  "## Decisions\nnone",
  "## Files and identifiers\njob.yaml",
  "## Next steps\nAnswer.",
].join("\n");

Deno.test("responses: after a compaction the resumed request is still a valid item transcript, the kept rounds' reasoning with it", async () => {
  const summaries: number[] = [];
  await using server = await startResponsesServer({
    respond: (body, index) => {
      if (!body.tools) {
        summaries.push(index);
        return { content: SUMMARY };
      }
      const rounds = (body.input ?? []).filter((item) => item.type === "function_call_output").length;
      return rounds < 5 || (index > 6 && rounds < 7)
        ? {
          reasoning: `plan ${index + 1}`,
          tool_calls: [{ name: "read_file", arguments: { path: `f${rounds}.txt` } }],
        }
        : { reasoning: `answer ${index + 1}`, content: `done after ${rounds} rounds` };
    },
  });
  const files = Object.fromEntries(
    Array.from(
      { length: 8 },
      (_, i) => [`f${i}.txt`, `file ${i}: ${"a line of release notes\n".repeat(60)}`],
    ),
  );
  const dir = await writeFiles(await tempDir(), {
    ...files,
    "job.yaml": job(server.url, "gpt-5-codex").replace('list_dir: { paths: ["."] }', "read_file: {}") +
      "compaction: { protect_first: 2, protect_last: 4 }\n",
  });
  const first = await runEvents(dir);
  assert.equal(first.code, 0, first.stderr);
  const id = String(first.events.at(-1)!.session_id);
  const compacted = await hermes(["sessions", "compact", id, "--json"], { cwd: dir, home: dir });
  assert.equal(compacted.code, 0, compacted.stderr);
  assert.equal(JSON.parse(compacted.stdout).changed, true, compacted.stdout);
  assert.deepEqual(summaries, [6], "the summary call went through the Responses API too");
  const resumed = await hermes(["run", "--resume", id, "-p", "and now?", "--output", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(
    server.statuses,
    Array(server.requests.length).fill(200),
    "every request valid for the server",
  );
  const after = server.requests[7]!;
  assert.match(JSON.stringify(after.input), /Read five files/);
  // Rounds 2 and 3 were folded into the summary (a user message), their reasoning with them; the protected
  // head and the kept tail still carry their own, each before its call.
  assert.deepEqual(shape(after), [
    "system",
    "user",
    "reasoning:rs_1",
    "function_call:call_1_1",
    "function_call_output:call_1_1",
    "user",
    "reasoning:rs_4",
    "function_call:call_4_1",
    "function_call_output:call_4_1",
    "reasoning:rs_5",
    "function_call:call_5_1",
    "function_call_output:call_5_1",
    "reasoning:rs_6",
    "assistant",
    "user",
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("responses: the fallback ladder switches model for the same items; every request starts with model.name", async () => {
  await using server = await startResponsesServer({
    respond: (body) =>
      body.model === "gpt-5-codex"
        ? { error: { status: 429, message: "Rate limit reached", code: "rate_limit_exceeded" } }
        : (body.input ?? []).some((item) => item.type === "function_call_output")
        ? { reasoning: "seen it", content: "one file" }
        : { reasoning: "look first", tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
  });
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, "gpt-5-codex", ", max_retries: 0, fallback: [gpt-5.1-codex]"),
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(events.at(-1)!.final, "one file");
  assert.deepEqual(server.requests.map((b) => b.model), [
    "gpt-5-codex",
    "gpt-5.1-codex",
    "gpt-5-codex",
    "gpt-5.1-codex",
  ]);
  assert.deepEqual(events.filter((e) => e.type === "provider.retry").map((e) => e.model), [
    "gpt-5.1-codex",
    "gpt-5.1-codex",
  ]);
  assert.deepEqual(shape(server.requests[3]!).slice(2), [
    "reasoning:rs_1",
    "function_call:call_1_1",
    "function_call_output:call_1_1",
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("responses: a repeated read of an unchanged file is answered with a read note in the function_call_output", async () => {
  await using server = await startResponsesServer({
    respond: (body) => {
      const reads = (body.input ?? []).filter((item) => item.type === "function_call_output").length;
      return reads < 2
        ? {
          reasoning: `read ${reads + 1}`,
          tool_calls: [{ name: "read_file", arguments: { path: "notes.txt" } }],
        }
        : { reasoning: "enough", content: "read twice" };
    },
  });
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, "gpt-5-codex").replace('list_dir: { paths: ["."] }', "read_file: {}"),
    "notes.txt": "the release is on Friday\n".repeat(20),
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(events.at(-1)!.final, "read twice");
  const outputs = server.requests[2]!.input!.filter((item) => item.type === "function_call_output");
  assert.match(String(outputs[0]!.output), /release is on Friday/);
  assert.match(String(outputs[1]!.output), /unchanged since message #\d+/);
  assert.doesNotMatch(String(outputs[1]!.output), /release is on Friday/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("responses: a secret in a reasoning summary is stored and sent back redacted; the encrypted content goes back whole", async () => {
  const secret = "hunter2-0123456789abcdef";
  await using server = await startResponsesServer({
    respond: (body) =>
      (body.input ?? []).some((item) => item.type === "function_call_output")
        ? { reasoning: "done", content: "listed" }
        : {
          reasoning: `the token is ${secret}`,
          tool_calls: [{ name: "list_dir", arguments: { path: "." } }],
        },
  });
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, "gpt-5-codex") + "redact: [DEPLOY_TOKEN]\n",
  });
  const { code, stderr, events } = await runEvents(dir, { env: { DEPLOY_TOKEN: secret } });
  assert.equal(code, 0, stderr);
  assert.deepEqual(server.statuses, [200, 200], "the encrypted content was accepted back");
  const [reasoning] = server.requests[1]!.input!.filter((item) => item.type === "reasoning");
  assert.deepEqual(reasoning!.summary, [{
    type: "summary_text",
    text: "the token is [REDACTED:DEPLOY_TOKEN]",
  }]);
  const shown = await hermes(["sessions", "show", String(events.at(-1)!.session_id), "--json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(shown.code, 0, shown.stderr);
  assert.doesNotMatch(shown.stdout, new RegExp(secret));
  await Deno.remove(dir, { recursive: true });
});
