import assert from "node:assert/strict";
import { type AnthropicServer, startAnthropicServer } from "../../tests/_testing/anthropic_server.ts";
import { providerContract } from "../../tests/contracts/provider.ts";
import { type AnthropicProviderOptions, createAnthropicProvider } from "./anthropic.ts";
import { type Provider, ProviderError, type RetryInfo } from "./provider.ts";
import type { ScriptEntry } from "./script.ts";

const API_KEY = "sk-ant-test-5b4a39281706";

for (const stream of [true, false]) {
  providerContract(`anthropic provider (${stream ? "streaming" : "non-streaming"})`, async (script) => {
    const server = await startAnthropicServer({ script, apiKey: API_KEY });
    const provider = createAnthropicProvider({
      model: "claude-test",
      baseURL: server.url,
      apiKey: API_KEY,
      stream,
      maxRetries: 0,
    });
    return { provider, close: () => server.close() };
  });
}

const ask = (text: string) => ({
  model: "claude-test",
  messages: [{ role: "user" as const, content: text }],
  tools: [],
});

async function withProvider(
  script: ScriptEntry[],
  fn: (provider: Provider, server: AnthropicServer) => Promise<void>,
  options: Partial<AnthropicProviderOptions> = {},
) {
  await using server = await startAnthropicServer({ script, apiKey: API_KEY });
  const provider = createAnthropicProvider({
    model: "claude-test",
    baseURL: server.url,
    apiKey: API_KEY,
    retryBaseMs: 1,
    ...options,
  });
  await fn(provider, server);
}

Deno.test("anthropic provider: an overloaded_error event in a stream, before any text, is retried", async () => {
  await withProvider(
    [{ content: "x", wire: { error_body: { type: "overloaded_error", message: "Overloaded" } } }, {
      content: "ok",
    }],
    async (provider) => {
      const retries: RetryInfo[] = [];
      const reply = await provider.complete(ask("hi"), { onRetry: (r) => retries.push(r) });
      assert.equal(reply.message.content, "ok");
      assert.equal(retries.length, 1);
      assert.equal(retries[0]!.status, 529);
      assert.match(retries[0]!.error, /error event in the stream.*overloaded_error/);
    },
  );
});

Deno.test("anthropic provider: a stream cut before message_stop is retried unless its text was shown", async () => {
  await withProvider(
    [{ content: "partial", wire: { no_done: true } }, { content: "whole" }],
    async (provider) => {
      assert.equal((await provider.complete(ask("hi"))).message.content, "whole");
    },
  );
  await withProvider(
    [{ content: "partial", wire: { no_done: true } }, { content: "whole" }],
    async (provider) => {
      const shown: string[] = [];
      await assert.rejects(provider.complete(ask("hi"), { onDelta: (t) => shown.push(t) }), (error) => {
        assert.ok(error instanceof ProviderError);
        assert.match(error.message, /message_stop/);
        return true;
      });
      assert.equal(shown.join(""), "partial");
    },
  );
});

Deno.test("anthropic provider: 'prompt is too long' is a context overflow naming the limit, not retried", async () => {
  await withProvider(
    [{ error: { status: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" } }],
    async (provider, server) => {
      await assert.rejects(provider.complete(ask("hi")), (error) => {
        assert.ok(error instanceof ProviderError);
        assert.equal(error.contextOverflow, true);
        assert.equal(error.contextLimit, 200000);
        return true;
      });
      assert.equal(server.records.length, 1);
    },
  );
});

Deno.test("anthropic provider: another 400 is not an overflow and is not retried", async () => {
  await withProvider(
    [{ error: { status: 400, message: "tools.0.name: invalid" } }],
    async (provider, server) => {
      await assert.rejects(provider.complete(ask("hi")), (error) => {
        assert.ok(error instanceof ProviderError);
        assert.equal(error.contextOverflow, false);
        assert.equal(error.status, 400);
        return true;
      });
      assert.equal(server.records.length, 1);
    },
  );
});

Deno.test("anthropic provider: the key is sent as the SDK sends it, and never appears in an error", async () => {
  await withProvider([{ error: { status: 500, message: `boom ${API_KEY}` } }], async (provider, server) => {
    await assert.rejects(provider.complete(ask("hi")), (error) => {
      assert.doesNotMatch(String(error), new RegExp(API_KEY));
      return true;
    });
    const headers = server.records[0]!.headers;
    assert.ok(headers.get("x-api-key") === API_KEY || headers.get("authorization") === `Bearer ${API_KEY}`);
  }, { maxRetries: 0 });
});

Deno.test("anthropic provider: a stream reports its output characters as they come (the spend cap's measure)", async () => {
  await withProvider(
    [{ content: "Twelve chars", tool_calls: [{ name: "read_file", arguments: { path: "a" } }] }],
    async (provider) => {
      let chars = 0;
      await provider.complete(ask("hi"), { onOutput: (n) => chars += n });
      assert.equal(chars, "Twelve chars".length + JSON.stringify({ path: "a" }).length);
    },
  );
});
