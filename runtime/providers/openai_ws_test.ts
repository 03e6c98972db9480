import assert from "node:assert/strict";
import { createOpenAIProvider } from "./openai.ts";
import { type ModelRequest, ProviderError, type RetryInfo } from "./provider.ts";
import { StallError } from "../core/stall.ts";
import type { Message } from "../core/types.ts";
import { startResponsesServer } from "../../tests/_testing/responses_server.ts";

const tools = [{ name: "list_dir", description: "list", parameters: { type: "object", properties: {} } }];

function request(messages: Message[]): ModelRequest {
  return { model: "gpt-5-codex", messages, tools };
}

function provider(url: string, extra: { idleTimeoutMs?: number; maxRetries?: number } = {}) {
  return createOpenAIProvider({
    model: "gpt-5-codex",
    baseURL: url,
    apiKey: "none",
    api: "responses",
    transport: "websocket",
    reasoning: true,
    retryBaseMs: 1,
    ...extra,
  });
}

const opening: Message[] = [{ role: "system", content: "terse" }, { role: "user", content: "look" }];

Deno.test("websocket transport: a call that continues the last one sends only its new items; close() ends the connection and the next call opens another", async () => {
  await using server = await startResponsesServer({
    script: [
      { reasoning: "r1", tool_calls: [{ name: "list_dir" }] },
      { content: "done" },
      { content: "again" },
    ],
  });
  const model = provider(server.url);
  const first = await model.complete(request(opening));
  assert.equal(first.finish_reason, "tool_calls");
  const transcript: Message[] = [
    ...opening,
    first.message,
    { role: "tool", tool_call_id: first.message.tool_calls![0]!.id, name: "list_dir", content: "a b" },
  ];
  const second = await model.complete(request(transcript));
  assert.equal(second.message.content, "done");
  assert.equal(server.frames[1]!.previous_response_id, "resp_1");
  assert.deepEqual(server.frames[1]!.input, [{
    type: "function_call_output",
    call_id: "call_1_1",
    output: "a b",
  }]);
  await model.close!();
  // The server sees the connection end (a test that never ends when close() does not close it).
  const seen = server.connections[0]!;
  if (seen.readyState !== WebSocket.CLOSED) {
    await new Promise((resolve) => seen.addEventListener("close", resolve, { once: true }));
  }
  // A new connection knows nothing of resp_2: the whole transcript goes.
  const third = await model.complete(
    request([...transcript, second.message, { role: "user", content: "more" }]),
  );
  assert.equal(third.message.content, "again");
  assert.equal(server.connections.length, 2);
  assert.equal(server.frames[2]!.previous_response_id, undefined);
  assert.equal((server.frames[2]!.input as unknown[]).length, 7);
  await model.close!();
});

Deno.test("websocket transport: a transcript that changed (compaction, redaction) is sent whole, not continued", async () => {
  await using server = await startResponsesServer({
    script: [{ tool_calls: [{ name: "list_dir" }] }, { content: "ok" }],
  });
  const model = provider(server.url);
  const first = await model.complete(request(opening));
  const rewritten: Message[] = [
    { role: "system", content: "terse" },
    { role: "user", content: "look (summarised)" },
    first.message,
    { role: "tool", tool_call_id: first.message.tool_calls![0]!.id, name: "list_dir", content: "x" },
  ];
  await model.complete(request(rewritten));
  assert.equal(server.frames[1]!.previous_response_id, undefined);
  assert.equal((server.frames[1]!.input as unknown[]).length, 4);
  await model.close!();
});

Deno.test("websocket transport: an error event with a status is judged as that status (429 retried, 400 not)", async () => {
  await using server = await startResponsesServer({
    script: [
      { error: { status: 429, message: "Rate limit reached", code: "rate_limit_exceeded" } },
      { content: "after the wait" },
      { error: { status: 400, message: "Invalid input", code: "invalid_request_error" } },
    ],
  });
  const model = provider(server.url);
  const retries: RetryInfo[] = [];
  const answer = await model.complete(request(opening), { onRetry: (info) => retries.push(info) });
  assert.equal(answer.message.content, "after the wait");
  assert.equal(retries.length, 1);
  assert.equal(retries[0]!.status, 429);
  // The error came on the open connection, which stays open for the next call.
  assert.equal(server.connections.length, 1);
  const refused = await model.complete(request(opening)).catch((error) => error);
  assert.ok(refused instanceof ProviderError);
  assert.equal(refused.status, 400);
  assert.match(refused.message, /HTTP 400 Bad Request \(Invalid input\)/);
  await model.close!();
});

Deno.test("websocket transport: silence past the idle timeout stalls the call and drops the connection; an abort does too", async () => {
  await using server = await startResponsesServer({
    script: [{ content: "late", delay_ms: 30_000 }, { content: "on time" }, {
      content: "never",
      delay_ms: 30_000,
    }],
  });
  const model = provider(server.url, { idleTimeoutMs: 150 });
  const stalled = await model.complete(request(opening)).catch((error) => error);
  assert.ok(stalled instanceof StallError, String(stalled));
  assert.match(stalled.message, /sent nothing for .* after the request \(model\.idle_timeout\)/);
  const next = await model.complete(request(opening));
  assert.equal(next.message.content, "on time");
  assert.equal(server.connections.length, 2);
  const controller = new AbortController();
  const pending = model.complete(request(opening), { signal: controller.signal }).catch((error) => error);
  while (server.frames.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort(new Error("cancelled by the test"));
  assert.match(String(await pending), /cancelled by the test/);
  await model.close!();
});
