/** The openai provider against what OpenAI-compatible servers in the wild put on the wire. */
import assert from "node:assert/strict";
import { type ModelRequest, ProviderError, type RetryInfo } from "./provider.ts";
import { startOpenAIServer } from "../../tests/_testing/openai_server.ts";
import { createOpenAIProvider } from "./openai.ts";
import type { ScriptEntry } from "./script.ts";

const ask: ModelRequest = { model: "m", messages: [{ role: "user", content: "go" }], tools: [] };
const CALL = { name: "read_file", arguments: { path: "a.txt" } };

async function complete(script: ScriptEntry[], options: { stream: boolean; maxRetries?: number }) {
  const server = await startOpenAIServer({ script });
  const retries: RetryInfo[] = [];
  const provider = createOpenAIProvider({
    model: "m",
    baseURL: server.url,
    apiKey: "k",
    stream: options.stream,
    maxRetries: options.maxRetries ?? 2,
    retryBaseMs: 1,
  });
  try {
    // retryBaseMs: 1 keeps the real backoff sleeps at a few milliseconds.
    const reply = await provider.complete(ask, { onRetry: (info) => retries.push(info) });
    return { reply, retries, requests: server.requests.length };
  } catch (error) {
    return { error, retries, requests: server.requests.length };
  } finally {
    await server.close();
  }
}

Deno.test("openai (wild): a stream ending in [DONE] without a finish_reason is a whole answer", async () => {
  const text = await complete([{ content: "all of it", wire: { finish_reason: null } }], { stream: true });
  assert.equal(text.reply?.message.content, "all of it");
  assert.equal(text.reply?.finish_reason, "stop");
  assert.equal(text.requests, 1);
  const calls = await complete([{ tool_calls: [CALL], wire: { finish_reason: null } }], { stream: true });
  assert.equal(calls.reply?.finish_reason, "tool_calls");
  assert.deepEqual(calls.reply?.message.tool_calls?.map((c) => c.name), ["read_file"]);
});

Deno.test("openai (wild): a stream cut before [DONE] and before a finish_reason is retried", async () => {
  const cut = await complete(
    [{ content: "half", wire: { finish_reason: null, no_done: true } }, { content: "whole" }],
    { stream: true },
  );
  assert.equal(cut.reply?.message.content, "whole");
  assert.equal(cut.retries.length, 1);
  assert.equal(cut.requests, 2);
  // A finish_reason without [DONE] is whole too: the reason says the answer ended.
  const finished = await complete([{ content: "done", wire: { no_done: true } }], { stream: true });
  assert.equal(finished.reply?.message.content, "done");
  assert.equal(finished.requests, 1);
});

for (const stream of [true, false]) {
  const mode = stream ? "streaming" : "non-streaming";
  Deno.test(`openai (wild, ${mode}): a tool call without "type": "function" is a function call`, async () => {
    const { reply } = await complete([{ tool_calls: [CALL], wire: { untyped_tool_calls: true } }], {
      stream,
    });
    assert.deepEqual(reply?.message.tool_calls?.map((c) => [c.name, JSON.parse(c.arguments)]), [
      ["read_file", { path: "a.txt" }],
    ]);
    assert.equal(reply?.finish_reason, "tool_calls");
  });

  Deno.test(`openai (wild, ${mode}): an error object in an HTTP 200 is judged by the status it carries`, async () => {
    for (
      const error_body of [
        { message: "slow down", code: 429 },
        { message: "slow down", status: "429" },
        { message: "try later", type: "rate_limit_error" },
        { message: "boom", type: "server_error" },
        { message: "busy", type: "overloaded_error" },
      ]
    ) {
      const retried = await complete([{ wire: { error_body } }, { content: "ok" }], { stream });
      assert.equal(retried.reply?.message.content, "ok", JSON.stringify(error_body));
      assert.equal(retried.retries.length, 1);
      assert.ok(retried.retries[0]!.status! >= 429, `status of ${JSON.stringify(error_body)}`);
    }
    const refused = await complete(
      [{ wire: { error_body: { message: "unknown field x", type: "invalid_request_error" } } }, {
        content: "x",
      }],
      { stream },
    );
    assert.ok(refused.error instanceof ProviderError);
    assert.equal(refused.error.status, 400);
    assert.match(refused.error.message, /unknown field x/);
    assert.equal(refused.requests, 1, "a request error is not retried");
    const overflow = await complete(
      [{ wire: { error_body: { message: "the prompt exceeds the context window", code: 400 } } }],
      { stream },
    );
    assert.ok(overflow.error instanceof ProviderError);
    assert.equal(overflow.error.contextOverflow, true);
    const down: ScriptEntry = { wire: { error_body: { message: "down", code: 503 } } };
    const exhausted = await complete([down, down], {
      stream,
      maxRetries: 1,
    });
    assert.ok(exhausted.error instanceof ProviderError);
    assert.match(exhausted.error.message, /carrying HTTP 503 Service Unavailable \(down\) after 1 retry/);
  });
}
