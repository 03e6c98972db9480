/**
 * Stalls are faults: `hermes run` against real HTTP servers that stop sending. A server that
 * accepts the request and then sends nothing, one that stops mid-stream (headers and some SSE chunks, then
 * silence) and one that stops mid-body without streaming: the run ends by `model.idle_timeout` with its result
 * JSON, `terminal_reason: stalled`, exit 1. A reply whose bytes keep coming is not a stall, however long it
 * takes, up to the `model.request_timeout` ceiling. Bounds on wall time here are generous: they only prove
 * that the timeout fires rather than the run hanging.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { sseChunk } from "../_testing/openai_server.ts";

type Behaviour = (request: Request, hold: Promise<void>) => Response | Promise<Response>;

/** A real HTTP server; `hold` resolves when the test ends, so silent responses close then. */
function serve(behaviour: Behaviour, endpoint = "/chat/completions") {
  const released = Promise.withResolvers<void>();
  const stopped = new AbortController();
  let requests = 0;
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {}, signal: stopped.signal },
    async (request) => {
      // Only the model's endpoint: a local server is also asked for its window (/props, /api/show).
      if (!new URL(request.url).pathname.endsWith(endpoint)) {
        return new Response("not found", { status: 404 });
      }
      requests++;
      await request.json();
      return behaviour(request, released.promise);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    get requests() {
      return requests;
    },
    async [Symbol.asyncDispose]() {
      released.resolve();
      stopped.abort();
      await server.finished;
    },
  };
}

const encoder = new TextEncoder();

/** A body that sends `first`, then nothing until the test ends. */
function thenSilence(first: string, hold: Promise<void>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      if (first) controller.enqueue(encoder.encode(first));
      await hold;
      controller.close();
    },
  });
}

const job = (url: string, model: string) =>
  `name: stall\nmodel: { name: m, base_url: "${url}", api_key_env: TEST_API_KEY, ${model} }\nprompt: hello\n`;

async function run(url: string, model: string) {
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(url, model) });
  const started = performance.now();
  const out = await hermes(["run", "job.yaml", "--output", "json"], {
    cwd: dir,
    home: dir,
    env: { TEST_API_KEY: "k" },
  });
  const seconds = (performance.now() - started) / 1000;
  const result = out.stdout.trim() ? JSON.parse(out.stdout) : null;
  return { ...out, result, seconds, dir };
}

function assertStalled(
  outcome: Awaited<ReturnType<typeof run>>,
  error: RegExp,
) {
  assert.equal(outcome.code, 1, outcome.stderr);
  assert.ok(outcome.result, `a result JSON is printed: ${outcome.stderr}`);
  assert.equal(outcome.result.type, "result");
  assert.equal(outcome.result.status, "failed");
  assert.equal(outcome.result.exit_code, 1);
  assert.equal(outcome.result.terminal_reason, "stalled", outcome.result.error);
  assert.match(outcome.result.error, error);
  // Generous: the idle timeout is 1 s; a hang would last until the test runner gives up.
  assert.ok(outcome.seconds < 60, `the run ended after ${outcome.seconds} s`);
}

for (const stream of [true, false]) {
  Deno.test(`stall (stream: ${stream}): a server that accepts the request and sends nothing → stalled, exit 1`, async () => {
    await using server = serve(async (_request, hold) => {
      await hold;
      return new Response("too late");
    });
    const outcome = await run(server.url, `stream: ${stream}, idle_timeout: 1s`);
    assertStalled(outcome, /the server sent nothing for 1s after the request \(model\.idle_timeout\)/);
    assert.equal(server.requests, 1, "a stall is not retried");
    // The session is stored as ended the same way.
    const shown = await hermes(["sessions", "show", outcome.result.session_id, "--json"], {
      home: outcome.dir,
    });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /"terminal_reason":\s*"stalled"/);
  });
}

Deno.test("stall (stream: true): headers and two SSE chunks, then silence → stalled mid-reply, exit 1", async () => {
  await using server = serve((_request, hold) =>
    new Response(
      thenSilence(sseChunk({ role: "assistant", content: "Hel" }) + sseChunk({ content: "lo, wor" }), hold),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const outcome = await run(server.url, "stream: true, idle_timeout: 1s");
  assertStalled(outcome, /the server sent nothing for 1s in the middle of its reply \(model\.idle_timeout\)/);
  assert.equal(server.requests, 1);
});

Deno.test("stall (stream: false): headers and half a JSON body, then silence → stalled mid-reply, exit 1", async () => {
  await using server = serve((_request, hold) =>
    new Response(thenSilence('{"id":"c1","object":"chat.completion","choices":[{"index":0,', hold), {
      headers: { "content-type": "application/json" },
    })
  );
  const outcome = await run(server.url, "stream: false, idle_timeout: 1s");
  assertStalled(outcome, /the server sent nothing for 1s in the middle of its reply \(model\.idle_timeout\)/);
});

Deno.test("stall: a reply whose pieces keep coming succeeds though it takes longer than idle_timeout", async () => {
  const pieces = ["One ", "piece ", "at ", "a ", "time, ", "slowly."];
  await using server = serve(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode(sseChunk({ role: "assistant", content: "" })));
          for (const piece of pieces) {
            await new Promise((resolve) => setTimeout(resolve, 500));
            controller.enqueue(encoder.encode(sseChunk({ content: piece })));
          }
          controller.enqueue(encoder.encode(sseChunk({}, "stop") + "data: [DONE]\n\n"));
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  // 3 s of reply against a 2 s idle bound: only inactivity counts.
  const outcome = await run(server.url, "stream: true, idle_timeout: 2s");
  assert.equal(outcome.code, 0, outcome.stderr);
  assert.equal(outcome.result.terminal_reason, "completed");
  assert.equal(outcome.result.final, pieces.join(""));
});

/** SSE comments every 100 ms, forever: bytes arrive, no event does. */
function keepAlivesForever(): Response {
  let timer: ReturnType<typeof setInterval> | undefined;
  return new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => controller.enqueue(encoder.encode(": keep-alive\n\n")), 100);
      },
      cancel() {
        clearInterval(timer);
      },
    }),
    { headers: { "content-type": "text/event-stream" } },
  );
}

Deno.test("stall: bytes that trickle forever are stopped by the request_timeout ceiling → stalled, exit 1", async () => {
  await using server = serve(keepAlivesForever);
  const outcome = await run(server.url, "stream: true, idle_timeout: 1s, request_timeout: 3s");
  assertStalled(outcome, /no complete answer within 3s \(model\.request_timeout\)/);
  assert.equal(server.requests, 1);
});

Deno.test("stall (anthropic): keep-alives that trickle forever are stopped by the request_timeout ceiling → stalled, exit 1", async () => {
  await using server = serve((request) => {
    // The Messages API's stream: a keep-alive comment yields no event, so only the ceiling can end the read.
    // The SDK's 1.x sends the key as a bearer token; the API also takes `x-api-key`.
    const key = request.headers.get("x-api-key") ??
      /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    if (key !== "k") return new Response("invalid x-api-key", { status: 401 });
    return keepAlivesForever();
  }, "/v1/messages");
  const outcome = await run(
    server.url.replace(/\/v1$/, ""),
    "provider: anthropic, stream: true, idle_timeout: 1s, request_timeout: 3s",
  );
  assertStalled(outcome, /no complete answer within 3s \(model\.request_timeout\)/);
  // One request, read until the ceiling: not a ceiling reached through retries of failed attempts.
  assert.equal(server.requests, 1);
});

Deno.test("stall (anthropic): a streamed reply whose events keep coming succeeds (the allowed neighbour)", async () => {
  await using server = serve(() => {
    const events = [
      ["message_start", {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "m",
          content: [],
          stop_reason: null,
          usage: { input_tokens: 3, output_tokens: 0 },
        },
      }],
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: "still here" },
      }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", {
        type: "message_delta",
        delta: { stop_reason: "end_turn" },
        usage: { output_tokens: 2 },
      }],
      ["message_stop", { type: "message_stop" }],
    ] as const;
    const body = events.map(([name, data]) =>
      `: keep-alive\n\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`
    ).join("");
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }, "/v1/messages");
  const outcome = await run(
    server.url.replace(/\/v1$/, ""),
    "provider: anthropic, stream: true, idle_timeout: 1s, request_timeout: 3s",
  );
  assert.equal(outcome.code, 0, outcome.stderr);
  assert.equal(outcome.result.final, "still here");
});
