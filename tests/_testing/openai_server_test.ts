import assert from "node:assert/strict";
import { type OpenAIServer, startOpenAIServer } from "./openai_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

async function withServer(
  options: Parameters<typeof startOpenAIServer>[0],
  fn: (server: OpenAIServer) => Promise<void>,
): Promise<void> {
  const server = await startOpenAIServer(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

function post(server: OpenAIServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

function chat(text: string, extra: Record<string, unknown> = {}) {
  return { model: "m", messages: [{ role: "user", content: text }], ...extra };
}

/** The `data:` payloads of an SSE body, in order. */
async function sseData(response: Response): Promise<string[]> {
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const text = await response.text();
  return text.split("\n\n").filter((block) => block.startsWith("data: ")).map((block) => block.slice(6));
}

Deno.test("openai server: url ends in /v1 and GET /v1/models lists the model", async () => {
  await withServer({ model: "tiny" }, async (server) => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const models = await (await fetch(`${server.url}/models`)).json();
    assert.deepEqual(models.data.map((m: { id: string }) => m.id), ["tiny"]);
    const missing = await fetch(`${server.url}/nothing`);
    assert.equal(missing.status, 404);
    assert.match((await missing.json()).error.message, /Unknown route GET \/v1\/nothing/);
  });
});

Deno.test("openai server: a non-streaming reply is a chat.completion with tool calls and usage", async () => {
  const script: ScriptEntry[] = [
    { tool_calls: [{ name: "shell", arguments: { command: "ls" } }] },
    { content: "done", usage: { prompt_tokens: 3, completion_tokens: 2 } },
  ];
  await withServer(script, async (server) => {
    const first = await (await post(server, chat("list"))).json();
    assert.equal(first.object, "chat.completion");
    assert.deepEqual(first.choices[0].message, {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_1_1",
        type: "function",
        function: { name: "shell", arguments: '{"command":"ls"}' },
      }],
    });
    assert.equal(first.choices[0].finish_reason, "tool_calls");
    assert.ok(first.usage.prompt_tokens > 0);
    assert.equal(first.usage.total_tokens, first.usage.prompt_tokens + first.usage.completion_tokens);
    const second = await (await post(server, chat("go on"))).json();
    assert.equal(second.choices[0].message.content, "done");
    assert.equal(second.choices[0].finish_reason, "stop");
    assert.deepEqual(second.usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    assert.equal(server.requests.length, 2);
    assert.deepEqual(server.requests[0], chat("list"));
  });
});

Deno.test("openai server: a streamed reply sends content in pieces and tool calls as index deltas", async () => {
  const script: ScriptEntry[] = [{
    content: "Hello world",
    tool_calls: [{ id: "call_x", name: "read_file", arguments: { path: "a.txt" } }, { name: "list_dir" }],
  }];
  await withServer({ script, chunkChars: 4 }, async (server) => {
    const data = await sseData(
      await post(server, chat("hi", { stream: true, stream_options: { include_usage: true } })),
    );
    assert.equal(data.at(-1), "[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    assert.ok(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0].id));
    assert.equal(chunks[0].choices[0].delta.role, "assistant");
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "");
    assert.deepEqual(content.filter(Boolean), ["Hell", "o wo", "rld"]);
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    // The first delta of each call carries id, type and name; the rest only argument text, by index.
    assert.deepEqual(toolDeltas.filter((d) => d.id).map((d) => [d.index, d.id, d.function.name]), [
      [0, "call_x", "read_file"],
      [1, "call_1_2", "list_dir"],
    ]);
    const args = [0, 1].map((i) =>
      toolDeltas.filter((d) => d.index === i).map((d) => d.function.arguments).join("")
    );
    assert.deepEqual(args, ['{"path":"a.txt"}', "{}"]);
    assert.ok(toolDeltas.filter((d) => d.index === 0).length > 2, "arguments were not split");
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    assert.deepEqual(finish.map((c) => c.choices[0].finish_reason), ["tool_calls"]);
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.ok(usage.usage.completion_tokens > 0);
  });
});

Deno.test("openai server: usage is streamed only when stream_options.include_usage is set", async () => {
  await withServer([{ content: "plain" }], async (server) => {
    const data = await sseData(await post(server, chat("hi", { stream: true })));
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    assert.ok(chunks.every((c) => c.usage === undefined && c.choices.length === 1));
    assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
  });
});

Deno.test("openai server: error entries answer with the status, an OpenAI error body and Retry-After", async () => {
  const script: ScriptEntry[] = [
    { error: { status: 429, message: "slow down", code: "rate_limit_exceeded", retry_after: 2 } },
    { error: { status: 503, message: "overloaded" } },
  ];
  await withServer(script, async (server) => {
    const limited = await post(server, chat("a"));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "2");
    assert.deepEqual((await limited.json()).error, {
      message: "slow down",
      type: "invalid_request_error",
      code: "rate_limit_exceeded",
      param: null,
    });
    const down = await post(server, chat("b"));
    assert.equal(down.status, 503);
    assert.equal(down.headers.get("retry-after"), null);
    assert.equal((await down.json()).error.type, "server_error");
  });
});

Deno.test("openai server: match entries, exhaustion, push and replace", async () => {
  await withServer([{ match: "ping", content: "pong" }, { content: "first" }], async (server) => {
    const answer = async (text: string) => {
      const response = await post(server, chat(text));
      const body = await response.json();
      return response.ok ? body.choices[0].message.content : `${response.status} ${body.error.message}`;
    };
    assert.equal(server.remaining, 2);
    assert.equal(await answer("hello"), "first");
    assert.equal(await answer("ping?"), "pong");
    assert.equal(server.remaining, 0);
    assert.equal(await answer("more"), "500 script exhausted");
    server.push({ content: "pushed" });
    assert.equal(await answer("more"), "pushed");
    server.replace([{ content: "fresh" }]);
    assert.equal(server.remaining, 1);
    assert.equal(await answer("again"), "fresh");
    assert.equal(server.requests.length, 5);
  });
});

Deno.test("openai server: with apiKey set, a wrong key is rejected with 401 and the right one passes", async () => {
  await withServer({ script: [{ content: "ok" }], apiKey: "sk-right" }, async (server) => {
    const wrong = await post(server, chat("x"), { authorization: "Bearer sk-wrong" });
    assert.equal(wrong.status, 401);
    assert.match((await wrong.json()).error.message, /Incorrect API key provided: sk-wrong/);
    const right = await post(server, chat("x"), { authorization: "Bearer sk-right" });
    assert.equal(right.status, 200);
    assert.equal((await right.json()).choices[0].message.content, "ok");
  });
});

Deno.test("openai server: invalid JSON is a 400 and is not recorded", async () => {
  await withServer([{ content: "unused" }], async (server) => {
    const response = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{not json" });
    assert.equal(response.status, 400);
    assert.match((await response.json()).error.message, /not valid JSON/);
    assert.equal(server.requests.length, 0);
    assert.equal(server.remaining, 1);
  });
});

Deno.test("openai server: close() ends a pending delay instead of waiting it out", async () => {
  const server = await startOpenAIServer([{ delay: "60s", content: "late" }]);
  const pending = post(server, chat("slow")).then(async (r) => {
    await r.body?.cancel();
    return r.status;
  }, () => "connection closed");
  while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const started = Date.now();
  await server.close();
  assert.ok(Date.now() - started < 10_000, "close() waited for the delay");
  assert.ok([499, "connection closed"].includes(await pending));
});

Deno.test("openai server: runs as a script that serves a reply file and prints its URL", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/replies.yaml`;
    await Deno.writeTextFile(file, "- content: from the file\n");
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./openai_server.ts", import.meta.url).pathname, file],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let printed = "";
    while (!printed.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) break;
      printed += value;
    }
    const url = printed.trim();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const body = await (await fetch(`${url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify(chat("hi")),
    })).json();
    assert.equal(body.choices[0].message.content, "from the file");
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
    await lines.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
