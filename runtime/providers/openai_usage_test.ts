/** The usage an OpenAI-compatible server reports, through the real SDK over HTTP: cached prompt tokens. */
import assert from "node:assert/strict";
import { startOpenAIServer } from "../../tests/_testing/openai_server.ts";
import { createOpenAIProvider } from "./openai.ts";

const ask = { model: "m", messages: [{ role: "user" as const, content: "hello there" }], tools: [] };

for (const stream of [true, false]) {
  const mode = stream ? "streaming" : "non-streaming";
  Deno.test(`openai usage (${mode}): prompt_tokens_details.cached_tokens becomes usage.cached_tokens`, async () => {
    await using server = await asyncDisposable(
      await startOpenAIServer([
        { content: "a", usage: { prompt_tokens: 900, completion_tokens: 3, cached_tokens: 640 } },
        { content: "b", usage: { prompt_tokens: 900, completion_tokens: 3 } },
      ]),
    );
    const provider = createOpenAIProvider({
      model: "m",
      baseURL: server.url,
      apiKey: "k",
      stream,
      maxRetries: 0,
    });
    const cached = await provider.complete(ask);
    assert.deepEqual(cached.usage, { prompt_tokens: 900, completion_tokens: 3, cached_tokens: 640 });
    // A server that reports no cache (llama.cpp, Ollama, most proxies): 0, not missing.
    const uncached = await provider.complete(ask);
    assert.deepEqual(uncached.usage, { prompt_tokens: 900, completion_tokens: 3, cached_tokens: 0 });
  });

  Deno.test(`openai usage (${mode}): completion_tokens_details.reasoning_tokens becomes usage.reasoning_tokens`, async () => {
    await using server = await asyncDisposable(
      await startOpenAIServer([
        { content: "a", usage: { prompt_tokens: 50, completion_tokens: 300, reasoning_tokens: 256 } },
      ]),
    );
    const provider = createOpenAIProvider({
      model: "m",
      baseURL: server.url,
      apiKey: "k",
      stream,
      maxRetries: 0,
    });
    const answer = await provider.complete(ask);
    assert.deepEqual(answer.usage, {
      prompt_tokens: 50,
      completion_tokens: 300,
      cached_tokens: 0,
      reasoning_tokens: 256,
    });
  });
}

function asyncDisposable<T extends { close(): Promise<void> }>(server: T): T & AsyncDisposable {
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.close() });
}
