/**
 * `model.transport: websocket` through the real CLI against the scripted Responses server's WebSocket mode
 * (tests/_testing/responses_server.ts): one connection per run, later calls sending only their new items with
 * `previous_response_id`, the model seeing every reasoning item and call in order as on HTTP; usage as the
 * server reported it; a dropped connection opened again, a lost continuation sent whole; auth headers on the
 * handshake (OpenAI and Azure); the setting refused without `model.api: responses`.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import {
  type ResponsesBody,
  type ResponsesReply,
  sealed,
  startResponsesServer,
} from "../_testing/responses_server.ts";
import { selfSigned } from "../_testing/tls.ts";

function job(url: string, extra = "") {
  return `name: codex\nmodel: { name: gpt-5-codex, base_url: "${url}", api_key_env: none, api: responses, ` +
    `transport: websocket${extra} }\nsystem: You are terse.\nprompt: look around\n` +
    `tools:\n  list_dir: { paths: ["."] }\n`;
}

/** Each item of an input as `type:id`, messages as their role. */
function shape(input: ResponsesBody["input"]): string[] {
  return (input ?? []).map((item) => {
    if (item.type === "reasoning") return `reasoning:${item.id}`;
    if (item.type === "function_call") return `function_call:${item.call_id}`;
    if (item.type === "function_call_output") return `function_call_output:${item.call_id}`;
    return String(item.role);
  });
}

/** What the model sees in call `k`: replies 6 and 12 are final answers, a resumed run's prompt after the 6th. */
function expectedShape(k: number): string[] {
  const out = ["system", "user"];
  for (let j = 0; j < k; j++) {
    out.push(`reasoning:rs_${j + 1}`);
    if (j % 6 === 5) out.push("assistant", "user");
    else out.push(`function_call:call_${j + 1}_1`, `function_call_output:call_${j + 1}_1`);
  }
  return out;
}

function sum(usages: { input_tokens: number; output_tokens: number }[]) {
  return {
    prompt: usages.reduce((n, u) => n + u.input_tokens, 0),
    completion: usages.reduce((n, u) => n + u.output_tokens, 0),
  };
}

const rounds = (_body: ResponsesBody, index: number): ResponsesReply => ({
  reasoning: `round ${index + 1}`,
  ...(index % 6 === 5
    ? { content: `done ${Math.floor(index / 6) + 1}` }
    : { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] }),
  usage: { input_tokens: 300 + 40 * index, output_tokens: 20 + index, reasoning_tokens: 5 },
});

for (const stream of [true, false]) {
  Deno.test(`websocket (stream: ${stream}): 12 tool rounds across a resume, one connection per run, later calls send only new items; the model sees every item in order`, async () => {
    await using server = await startResponsesServer({ respond: rounds });
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, `, stream: ${stream}`) });
    const first = await runEvents(dir);
    assert.equal(first.code, 0, first.stderr);
    const result = first.events.at(-1)!;
    assert.equal(result.final, "done 1");
    const resumed = await hermes(
      ["run", "--resume", String(result.session_id), "-p", "look once more", "--output", "stream-json"],
      { cwd: dir, home: dir },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    const second = resumed.stdout.trim().split("\n").map((line) => JSON.parse(line)).at(-1)!;
    assert.equal(second.final, "done 2");

    // Every call went over the WebSocket: one connection per run, no HTTP request; each session closed its
    // connection with a close frame when it ended (a process that just exits leaves 1006).
    assert.equal(server.connections.length, 2);
    assert.deepEqual(server.closeCodes, [1000, 1000]);
    // (A local endpoint is asked for its window over HTTP first: /props, /api/show.)
    assert.deepEqual(server.urls.filter((url) => url.includes("responses")), [
      "/v1/responses",
      "/v1/responses",
    ]);
    assert.deepEqual(server.statuses, Array(12).fill(200));
    assert.equal(server.frames.length, 12);
    server.frames.forEach((frame, k) => {
      assert.equal(frame.type, "response.create");
      assert.equal("stream" in frame, false, `call ${k + 1} sent stream`);
      assert.equal(frame.store, false);
      assert.deepEqual(frame.include, ["reasoning.encrypted_content"]);
      if (k % 6 === 0) {
        // A run's first call opens its connection: nothing to continue from, the whole transcript goes.
        assert.equal(frame.previous_response_id, undefined, `call ${k + 1}`);
        assert.deepEqual(shape(frame.input), expectedShape(k), `call ${k + 1}`);
      } else {
        // Later calls name the connection's latest response and send only the tool's output.
        assert.equal(frame.previous_response_id, `resp_${k}`, `call ${k + 1}`);
        assert.deepEqual(shape(frame.input), [`function_call_output:call_${k}_1`], `call ${k + 1}`);
      }
    });
    // As the model saw them, calls carry everything before them, as over HTTP.
    server.requests.forEach((body, k) =>
      assert.deepEqual(shape(body.input), expectedShape(k), `call ${k + 1}`)
    );
    const reasoning = server.requests[11]!.input!.filter((item) => item.type === "reasoning");
    assert.equal(reasoning.length, 11);
    assert.equal(reasoning[6]!.encrypted_content, sealed(7, "round 7"));
    // Usage is what the server reported, call by call.
    const usage = (r: Record<string, unknown>) =>
      r.usage as { prompt_tokens: number; completion_tokens: number };
    assert.deepEqual(
      { prompt: usage(result).prompt_tokens, completion: usage(result).completion_tokens },
      sum(server.usages.slice(0, 6)),
    );
    assert.deepEqual(
      { prompt: usage(second).prompt_tokens, completion: usage(second).completion_tokens },
      sum(server.usages.slice(6, 12)),
    );
    await Deno.remove(dir, { recursive: true });
  });
}

Deno.test("websocket: a connection dropped mid-reply is opened again and the call sent whole", async () => {
  const script: ResponsesReply[] = [
    { reasoning: "one", tool_calls: [{ name: "list_dir" }] },
    // The second call's connection drops after four events: no text yet, so the call is asked again.
    { reasoning: "two", tool_calls: [{ name: "list_dir" }], cut_after: 4 },
    { reasoning: "two again", tool_calls: [{ name: "list_dir" }] },
    { content: "all done" },
  ];
  await using server = await startResponsesServer({ script });
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, ", stream: true") });
  const run = await runEvents(dir);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.events.at(-1)!.final, "all done");
  const retries = run.events.filter((event) => event.type === "provider.retry");
  assert.equal(retries.length, 1);
  assert.match(String(retries[0]!.error), /closed the WebSocket \(code 1011/);
  assert.equal(server.connections.length, 2);
  assert.deepEqual(server.frames.map((frame) => frame.previous_response_id), [
    undefined,
    "resp_1",
    // After the drop: a new connection knows nothing of resp_1, so the whole input goes.
    undefined,
    "resp_3",
  ]);
  assert.deepEqual(shape(server.frames[2]!.input), shape(server.requests[1]!.input));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("websocket: a connection that keeps dropping ends the run failed, provider_error, after the retries", async () => {
  const cut = { tool_calls: [{ name: "list_dir" }], cut_after: 3 };
  await using server = await startResponsesServer({ script: [cut, cut, cut] });
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, ", max_retries: 2") });
  const run = await runEvents(dir);
  assert.equal(run.code, 1, run.stderr);
  const result = run.events.at(-1)!;
  assert.equal(result.status, "failed");
  assert.equal(result.terminal_reason, "provider_error");
  assert.match(run.stderr, /connection failed: the server closed the WebSocket .* after 2 retries/);
  assert.equal(server.connections.length, 3);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("websocket: a reply whose text breaks off with the connection is asked again whole (the CLI shows no partial text)", async () => {
  const script: ResponsesReply[] = [{ content: "a long answer that breaks off", cut_after: 8 }, {
    content: "the whole answer",
  }];
  await using server = await startResponsesServer({ script });
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, ", stream: true") });
  const run = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout.trim(), "the whole answer");
  assert.equal(server.connections.length, 2);
  assert.equal(server.frames.length, 2);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("websocket: a continuation the server no longer holds (previous_response_not_found) is sent again whole", async () => {
  const script: ResponsesReply[] = [
    { reasoning: "one", tool_calls: [{ name: "list_dir" }], forget: true },
    { content: "fine" },
  ];
  await using server = await startResponsesServer({ script });
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url) });
  const run = await runEvents(dir);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.events.at(-1)!.final, "fine");
  assert.equal(run.events.filter((event) => event.type === "provider.retry").length, 0);
  assert.equal(server.connections.length, 1);
  assert.deepEqual(server.frames.map((frame) => frame.previous_response_id), [
    undefined,
    "resp_1",
    undefined,
  ]);
  assert.deepEqual(shape(server.frames[2]!.input), [
    "system",
    "user",
    "reasoning:rs_1",
    "function_call:call_1_1",
    "function_call_output:call_1_1",
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("websocket: the handshake carries the key (Authorization); a wrong key is HTTP 401, not retried", async () => {
  await using server = await startResponsesServer({ apiKey: "sk-right", script: [{ content: "hello" }] });
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url).replace("api_key_env: none", "api_key_env: MY_KEY"),
  });
  const ok = await runEvents(dir, { env: { MY_KEY: "sk-right" } });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.events.at(-1)!.final, "hello");
  const refused = await runEvents(dir, { env: { MY_KEY: "sk-wrong-key-123" } });
  assert.equal(refused.code, 1);
  assert.equal(refused.events.at(-1)!.terminal_reason, "provider_error");
  assert.match(refused.stderr, /HTTP 401/);
  assert.doesNotMatch(refused.stderr + JSON.stringify(refused.events), /sk-wrong-key-123/);
  assert.equal(refused.events.filter((event) => event.type === "provider.retry").length, 0);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("websocket on azure: the handshake goes to /openai/responses with the api-version and the api-key header", async () => {
  await using server = await startResponsesServer({
    azure: { apiKey: "az-key", apiVersion: "2025-04-01-preview" },
    script: [{ tool_calls: [{ name: "list_dir" }] }, { content: "from azure" }],
  });
  const base = server.url.replace(/\/v1$/, "");
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: az\nmodel: { provider: azure, name: my-codex, base_url: "${base}", api: responses, ` +
      `transport: websocket }\nprompt: hi\ntools:\n  list_dir: { paths: ["."] }\n`,
  });
  const run = await runEvents(dir, { env: { AZURE_OPENAI_API_KEY: "az-key" } });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.events.at(-1)!.final, "from azure");
  assert.equal(server.connections.length, 1);
  assert.deepEqual(server.urls, ["/openai/responses?api-version=2025-04-01-preview"]);
  assert.equal(server.frames[0]!.model, "my-codex");
  assert.equal(server.frames[1]!.previous_response_id, "resp_1");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("model.transport: websocket where the model is not asked on the Responses API is exit 2 at its line; http, responses and auto with a Responses-only model pass", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: x\nmodel:\n  name: gpt-4.1\n  transport: websocket\nprompt: hi\n",
  });
  const refused = await hermes(["validate", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /job\.yaml:4:\d+: model\.transport: transport websocket needs the Responses API: .*\(api is auto, the default, model gpt-4\.1\)/,
  );
  const chat = await writeFiles(dir, {
    "job.yaml": "name: x\nmodel:\n  name: gpt-4.1\n  api: chat\n  transport: websocket\nprompt: hi\n",
  });
  const run = await hermes(["run", "job.yaml"], { cwd: chat, home: chat, env: { OPENAI_API_KEY: "k" } });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /job\.yaml:5:\d+: model\.transport: .*\(api is chat, model gpt-4\.1\)/);
  assert.doesNotMatch(run.stderr, /\n\s+at /);
  const anthropic = await writeFiles(dir, {
    "job.yaml":
      "name: x\nmodel: { provider: anthropic, name: claude-sonnet-4-5, transport: http }\nprompt: hi\n",
  });
  const other = await hermes(["run", "job.yaml"], {
    cwd: anthropic,
    home: anthropic,
    env: { ANTHROPIC_API_KEY: "k" },
  });
  assert.equal(other.code, 2);
  assert.match(other.stderr, /model\.transport needs provider: openai or azure/);
  for (
    const model of [
      "{ name: gpt-4.1, transport: http }",
      "{ name: gpt-5-codex, api: responses, transport: websocket }",
      // auto asks a model served only on the Responses API there.
      "{ name: gpt-5-codex, transport: websocket }",
    ]
  ) {
    await writeFiles(dir, { "job.yaml": `name: x\nmodel: ${model}\nprompt: hi\n` });
    const valid = await hermes(["validate", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(valid.code, 0, `${model}: ${valid.stderr}`);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("websocket over TLS: an https base URL is reached as wss:// and the server's certificate is verified", async () => {
  const dir = await tempDir();
  const { cert, key, ca } = await selfSigned(dir);
  await using server = await startResponsesServer({
    tls: { cert: await Deno.readTextFile(cert), key: await Deno.readTextFile(key) },
    script: [{ tool_calls: [{ name: "list_dir" }] }, { content: "over tls" }, { content: "never" }],
  });
  assert.match(server.url, /^https:/);
  await writeFiles(dir, { "job.yaml": job(server.url, ", max_retries: 0") });
  // Trusting the test CA (DENO_CERT), the run goes through.
  const trusted = await runEvents(dir, { env: { DENO_CERT: ca } });
  assert.equal(trusted.code, 0, trusted.stderr);
  assert.equal(trusted.events.at(-1)!.final, "over tls");
  assert.equal(server.frames[1]!.previous_response_id, "resp_1");
  // Without it the certificate is refused: no call reaches the server.
  const frames = server.frames.length;
  const untrusted = await runEvents(dir);
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stderr, /certificate|UnknownIssuer|invalid peer/i);
  assert.equal(server.frames.length, frames);
  await Deno.remove(dir, { recursive: true });
});
