import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { type ModelRequest, ProviderError, type RetryInfo } from "./provider.ts";
import type { Message, ToolSpec } from "../core/types.ts";
import { type OpenAIServer, startOpenAIServer } from "../../tests/_testing/openai_server.ts";
import { providerContract } from "../../tests/contracts/provider.ts";
import { createOpenAIProvider, type OpenAIProviderOptions } from "./openai.ts";
import { StallError } from "../core/stall.ts";
import type { ScriptEntry } from "./script.ts";

const API_KEY = "sk-test-9f8e7d6c5b4a39281706";

for (const stream of [true, false]) {
  providerContract(`openai provider (${stream ? "streaming" : "non-streaming"})`, async (script) => {
    const server = await startOpenAIServer({ script, apiKey: API_KEY });
    const provider = createOpenAIProvider({
      model: "m",
      baseURL: server.url,
      apiKey: API_KEY,
      stream,
      maxRetries: 0,
    });
    return { provider, close: () => server.close() };
  });
}

function ask(text: string): ModelRequest {
  return { model: "test-model", messages: [{ role: "user", content: text }], tools: [] };
}

async function withServer(
  script: ScriptEntry[] | Parameters<typeof startOpenAIServer>[0],
  fn: (server: OpenAIServer) => Promise<void>,
): Promise<void> {
  const server = await startOpenAIServer(script);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

function providerFor(server: OpenAIServer, options: Partial<OpenAIProviderOptions> = {}) {
  return createOpenAIProvider({ model: "test-model", baseURL: server.url, apiKey: API_KEY, ...options });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

Deno.test("openai: a 429 with Retry-After: 1 is retried after 1 s and then succeeds", async () => {
  const script: ScriptEntry[] = [
    { error: { status: 429, message: "Rate limit reached", code: "rate_limit_exceeded", retry_after: 1 } },
    { content: "finally" },
  ];
  await withServer(script, async (server) => {
    const clock = new ManualClock();
    const retries: RetryInfo[] = [];
    const provider = providerFor(server, { clock });
    const reply = await provider.complete(ask("go"), {
      onRetry: (info) => {
        retries.push(info);
        // The provider sleeps on the clock right after reporting; let the sleep start, then pass its time.
        setTimeout(() => clock.advance(info.delay_ms), 0);
      },
    });
    assert.equal(reply.message.content, "finally");
    assert.equal(retries.length, 1);
    assert.equal(retries[0]!.status, 429);
    assert.equal(retries[0]!.delay_ms, 1000);
    assert.equal(retries[0]!.attempt, 1);
    assert.match(retries[0]!.error, /HTTP 429 Too Many Requests \(Rate limit reached\)/);
    assert.equal(server.requests.length, 2);
  });
});

Deno.test("openai: a 500 is retried maxRetries times with growing backoff, then fails with ProviderError", async () => {
  const failure: ScriptEntry = { error: { status: 500, message: "upstream broke" } };
  await withServer([failure, failure, failure, failure, { content: "never reached" }], async (server) => {
    const retries: RetryInfo[] = [];
    const provider = providerFor(server, { maxRetries: 3, retryBaseMs: 10 });
    await assert.rejects(provider.complete(ask("go"), { onRetry: (info) => retries.push(info) }), (error) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.status, 500);
      assert.equal(error.contextOverflow, false);
      assert.equal(
        error.message,
        `Cannot complete model call to ${server.url}: HTTP 500 Internal Server Error (upstream broke) after 3 retries`,
      );
      return true;
    });
    assert.equal(server.requests.length, 4);
    assert.deepEqual(retries.map((r) => r.attempt), [1, 2, 3]);
    assert.ok(retries.every((r) => r.status === 500));
    // Backoff doubles from retryBaseMs with at most 25 % jitter below it.
    retries.forEach((r, i) => {
      const nominal = 10 * 2 ** i;
      assert.ok(
        r.delay_ms <= nominal && r.delay_ms >= nominal * 0.75,
        `retry ${i + 1} waited ${r.delay_ms} ms`,
      );
    });
    assert.equal(server.remaining, 1);
  });
});

Deno.test("openai: a 400 context_length_exceeded is a context overflow and is not retried", async () => {
  const script: ScriptEntry[] = [{
    error: {
      status: 400,
      message:
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
      code: "context_length_exceeded",
    },
  }];
  await withServer(script, async (server) => {
    let retried = false;
    const provider = providerFor(server, { retryBaseMs: 1 });
    await assert.rejects(provider.complete(ask("long"), { onRetry: () => (retried = true) }), (error) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.contextOverflow, true);
      assert.equal(error.status, 400);
      assert.match(error.message, /too long.*maximum context length is 8192/);
      return true;
    });
    assert.equal(retried, false);
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("openai: an overflow told only by the message (llama.cpp, Anthropic) is detected; other 400s are not", async () => {
  const script: ScriptEntry[] = [
    { error: { status: 400, message: "the request exceeds the available context size, try increasing it" } },
    { error: { status: 400, message: "prompt is too long: 210000 tokens > 200000 maximum" } },
    { error: { status: 400, message: "Invalid value for 'temperature': must be at most 2" } },
    { error: { status: 404, message: "The model 'nope' does not exist" } },
  ];
  await withServer(script, async (server) => {
    const provider = providerFor(server, { retryBaseMs: 1 });
    const outcomes: [boolean, number | null][] = [];
    for (let i = 0; i < 4; i++) {
      const error = await provider.complete(ask(`call ${i}`)).then(() => null, (e) => e);
      assert.ok(error instanceof ProviderError, `call ${i}: ${error}`);
      outcomes.push([error.contextOverflow, error.status]);
    }
    assert.deepEqual(outcomes, [[true, 400], [true, 400], [false, 400], [false, 404]]);
    // None of them was retried.
    assert.equal(server.requests.length, 4);
  });
});

Deno.test("openai: aborting during a slow reply rejects promptly with the abort reason", async () => {
  await withServer([{ delay: "60s", content: "too late" }], async (server) => {
    const provider = providerFor(server, { retryBaseMs: 1 });
    const controller = new AbortController();
    const reason = new Error("user pressed ctrl-c");
    const started = Date.now();
    const pending = provider.complete(ask("slow"), { signal: controller.signal });
    await until(() => server.requests.length === 1);
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    assert.ok(Date.now() - started < 10_000, "abort was not prompt");
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("openai: aborting during a retry sleep rejects at once", async () => {
  await withServer([{ error: { status: 503, message: "overloaded", retry_after: 50 } }], async (server) => {
    const provider = providerFor(server);
    const controller = new AbortController();
    const started = Date.now();
    const pending = provider.complete(ask("go"), {
      signal: controller.signal,
      onRetry: (info) => {
        assert.equal(info.delay_ms, 50_000);
        setTimeout(() => controller.abort(new Error("stop")), 0);
      },
    });
    await assert.rejects(pending, /^Error: stop$/);
    assert.ok(Date.now() - started < 10_000, "abort during the retry sleep was not prompt");
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("openai: a server that sends nothing for idleTimeoutMs stalls the call, not retried", async () => {
  const slow: ScriptEntry = { delay: "60s", content: "too late" };
  await withServer([slow, slow], async (server) => {
    const clock = new ManualClock();
    const retries: RetryInfo[] = [];
    const provider = providerFor(server, { clock, idleTimeoutMs: 5_000, maxRetries: 3, retryBaseMs: 100 });
    const pending = provider.complete(ask("slow"), { onRetry: (info) => retries.push(info) });
    await until(() => server.requests.length === 1);
    await clock.advance(4_999);
    let settled = false;
    pending.then(() => settled = true, () => settled = true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false, "the idle bound has not passed yet");
    await clock.advance(1);
    await assert.rejects(pending, (error) => {
      assert.ok(error instanceof StallError);
      assert.equal(error.reason, "stalled");
      assert.equal(error.kind, "idle");
      assert.match(
        error.message,
        /^Cannot complete model call to http:\/\/127\.0\.0\.1:\d+\/v1: the server sent nothing for 5s after the request \(model\.idle_timeout\)$/,
      );
      return true;
    });
    assert.equal(retries.length, 0, "a stall is not retried");
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("openai: bytes arriving keep a call alive past idleTimeoutMs, but not past its ceiling", async () => {
  // A server that trickles SSE keep-alive comments and never answers.
  const stopped = new AbortController();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {}, signal: stopped.signal }, () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => controller.enqueue(new TextEncoder().encode(": ping\n\n")), 20);
      },
      cancel() {
        clearInterval(timer);
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    const clock = new ManualClock();
    let progress = 0;
    const provider = createOpenAIProvider({
      model: "m",
      baseURL: `http://127.0.0.1:${server.addr.port}/v1`,
      apiKey: API_KEY,
      clock,
      idleTimeoutMs: 1_000,
      ceilingMs: 10_000,
    });
    const pending = provider.complete(ask("go"), { onProgress: () => progress++ });
    let settled = false;
    pending.then(() => settled = true, () => settled = true);
    // Ten idle bounds pass in steps of 999 ms, bytes arriving in each, up to the 10 s ceiling.
    for (const step of [...Array(10).fill(999), 10]) {
      const seen = progress;
      await until(() => progress > seen);
      if (step === 10) assert.equal(settled, false, "steady bytes keep the idle bound from firing");
      await clock.advance(step);
    }
    await assert.rejects(pending, (error) => {
      assert.ok(error instanceof StallError);
      assert.equal(error.kind, "ceiling");
      assert.match(error.message, /no complete answer within 10s \(model\.request_timeout\)$/);
      return true;
    });
  } finally {
    stopped.abort();
    await server.finished;
  }
});

Deno.test("openai: a refused connection is retried and reported without a status", async () => {
  const closed = await startOpenAIServer([]);
  await closed.close();
  const retries: RetryInfo[] = [];
  const provider = createOpenAIProvider({
    model: "m",
    baseURL: closed.url,
    apiKey: API_KEY,
    maxRetries: 2,
    retryBaseMs: 1,
  });
  await assert.rejects(
    provider.complete(ask("anyone?"), { onRetry: (info) => retries.push(info) }),
    (error) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.status, null);
      assert.match(
        error.message,
        new RegExp(`^Cannot complete model call to ${closed.url}: connection failed.* after 2 retries$`),
      );
      return true;
    },
  );
  assert.equal(retries.length, 2);
});

Deno.test("openai: streamed content and several tool calls are reassembled from small deltas", async () => {
  const script: ScriptEntry[] = [{
    content: "Let me look at both files.",
    tool_calls: [
      { id: "call_a", name: "read_file", arguments: { path: "src/main.ts", note: 'quotes " and unicode é' } },
      { id: "call_b", name: "list_dir", arguments: '{"path": "."}' },
    ],
  }];
  await withServer({ script, chunkChars: 3 }, async (server) => {
    const deltas: string[] = [];
    const reply = await providerFor(server, { stream: true }).complete(ask("look"), {
      onDelta: (text) => deltas.push(text),
    });
    assert.ok(deltas.length >= 5, `expected several deltas, got ${deltas.length}`);
    assert.equal(deltas.join(""), "Let me look at both files.");
    assert.deepEqual(reply.message, {
      role: "assistant",
      content: "Let me look at both files.",
      tool_calls: [
        {
          id: "call_a",
          name: "read_file",
          arguments: JSON.stringify({ path: "src/main.ts", note: 'quotes " and unicode é' }),
        },
        { id: "call_b", name: "list_dir", arguments: '{"path": "."}' },
      ],
    });
    assert.equal(reply.finish_reason, "tool_calls");
    assert.ok(reply.usage && reply.usage.prompt_tokens > 0);
  });
});

Deno.test("openai: the request body carries the mapped messages, tools and sampling fields", async () => {
  const tools: ToolSpec[] = [{
    name: "shell",
    description: "Run a command",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  }];
  const messages: Message[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "List files" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "call_1", name: "shell", arguments: '{"command":"ls"}' }],
    },
    { role: "tool", tool_call_id: "call_1", name: "shell", content: "a.txt\nb.txt" },
    { role: "assistant", content: "Two files." },
    { role: "user", content: "Thanks" },
  ];
  for (const stream of [true, false]) {
    await withServer([{ content: "You're welcome." }, { content: "again" }], async (server) => {
      const provider = providerFor(server, { stream });
      await provider.complete({ model: "test-model", messages, tools, max_tokens: 256, temperature: 0.2 });
      await provider.complete({
        model: "test-model",
        messages: [{ role: "user", content: "no tools" }],
        tools: [],
      });
      const [first, second] = server.requests;
      assert.equal(first!.model, "test-model");
      assert.deepEqual(first!.messages, [
        { role: "system", content: "Be brief." },
        { role: "user", content: "List files" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "call_1",
            type: "function",
            function: { name: "shell", arguments: '{"command":"ls"}' },
          }],
        },
        { role: "tool", tool_call_id: "call_1", content: "a.txt\nb.txt" },
        { role: "assistant", content: "Two files." },
        { role: "user", content: "Thanks" },
      ]);
      assert.deepEqual(first!.tools, [{
        type: "function",
        function: { name: "shell", description: "Run a command", parameters: tools[0]!.parameters },
      }]);
      assert.equal(first!.max_tokens, 256);
      assert.equal(first!.temperature, 0.2);
      assert.equal("tools" in second!, false);
      assert.equal("max_tokens" in second!, false);
      assert.equal("temperature" in second!, false);
      if (stream) {
        assert.equal(first!.stream, true);
        assert.deepEqual(first!.stream_options, { include_usage: true });
      } else {
        assert.notEqual(first!.stream, true);
      }
    });
  }
});

Deno.test("openai: the API key never appears in errors or retry reports", async () => {
  const leaky = `upstream rejected key ${API_KEY}`;
  await withServer(
    [{ error: { status: 502, message: leaky } }, { error: { status: 502, message: leaky } }],
    async (server) => {
      const reports: string[] = [];
      const provider = providerFor(server, { maxRetries: 1, retryBaseMs: 1 });
      const error = await provider.complete(ask("go"), { onRetry: (info) => reports.push(info.error) }).then(
        () => null,
        (e) => e,
      );
      assert.ok(error instanceof ProviderError);
      assert.equal(reports.length, 1);
      for (const text of [error.message, ...reports]) {
        assert.ok(!text.includes(API_KEY), `key leaked: ${text}`);
        assert.match(text, /upstream rejected key \[REDACTED/);
      }
    },
  );
  // A server that rejects the key echoes it back (as OpenAI does with part of it); a 401 is not retried.
  await withServer(
    { script: [{ content: "unreachable" }], apiKey: "sk-the-right-key-000000" },
    async (server) => {
      const provider = providerFor(server, { retryBaseMs: 1 });
      const error = await provider.complete(ask("go")).then(() => null, (e) => e);
      assert.ok(error instanceof ProviderError);
      assert.equal(error.status, 401);
      assert.ok(!error.message.includes(API_KEY), `key leaked: ${error.message}`);
      assert.match(error.message, /HTTP 401 Unauthorized \(Incorrect API key provided: \[REDACTED/);
      assert.equal(server.requests.length, 1);
    },
  );
});
