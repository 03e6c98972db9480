/**
 * The behaviour every {@linkcode Provider} must show, as Deno tests. Call `providerContract` from a `_test.ts`
 * file with a factory that serves the given script (scripted provider, openai provider + test server, …).
 */
import assert from "node:assert/strict";
import { type ModelRequest, type Provider, ProviderError } from "../../runtime/providers/provider.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import type { Message, ToolSpec } from "../../runtime/core/types.ts";

export interface ContractSubject {
  provider: Provider;
  close(): Promise<void>;
}

export type ContractFactory = (script: ScriptEntry[]) => Promise<ContractSubject>;

const READ_FILE: ToolSpec = {
  name: "read_file",
  description: "Read a text file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

function ask(text: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "contract-model", messages: [{ role: "user", content: text }], tools: [], ...extra };
}

async function withSubject(make: ContractFactory, script: ScriptEntry[], fn: (p: Provider) => Promise<void>) {
  const subject = await make(script);
  try {
    await fn(subject.provider);
  } finally {
    await subject.close();
  }
}

export function providerContract(name: string, make: ContractFactory): void {
  Deno.test(`${name}: answers with plain text`, async () => {
    await withSubject(make, [{ content: "Hello there, general Kenobi." }], async (provider) => {
      const deltas: string[] = [];
      const reply = await provider.complete(ask("hi"), { onDelta: (text) => deltas.push(text) });
      assert.equal(reply.message.role, "assistant");
      assert.equal(reply.message.content, "Hello there, general Kenobi.");
      assert.equal(reply.message.tool_calls?.length ?? 0, 0);
      assert.equal(reply.finish_reason, "stop");
      // Providers that stream must deliver exactly the final text through onDelta.
      if (deltas.length) assert.equal(deltas.join(""), "Hello there, general Kenobi.");
    });
  });

  Deno.test(`${name}: answers with a tool call, then with text after the tool result`, async () => {
    const script: ScriptEntry[] = [
      { tool_calls: [{ name: "read_file", arguments: { path: "notes/a.txt" } }] },
      { content: "The file says hello." },
    ];
    await withSubject(make, script, async (provider) => {
      const messages: Message[] = [{ role: "user", content: "What is in notes/a.txt?" }];
      const first = await provider.complete(ask("", { messages, tools: [READ_FILE] }));
      const calls = first.message.tool_calls ?? [];
      assert.equal(calls.length, 1);
      const call = calls[0]!;
      assert.equal(call.name, "read_file");
      assert.deepEqual(JSON.parse(call.arguments), { path: "notes/a.txt" });
      assert.equal(typeof call.id, "string");
      assert.ok(call.id.length > 0, "tool call id is empty");
      assert.equal(first.message.content, "");
      assert.equal(first.finish_reason, "tool_calls");

      messages.push(first.message, {
        role: "tool",
        tool_call_id: call.id,
        name: "read_file",
        content: "hello",
      });
      const second = await provider.complete(ask("", { messages, tools: [READ_FILE] }));
      assert.equal(second.message.content, "The file says hello.");
      assert.equal(second.message.tool_calls?.length ?? 0, 0);
    });
  });

  Deno.test(`${name}: reports usage`, async () => {
    const script: ScriptEntry[] = [
      { content: "counted", usage: { prompt_tokens: 11, completion_tokens: 7 } },
      { content: "estimated answer" },
      { content: "cached", usage: { prompt_tokens: 40, completion_tokens: 2, cached_tokens: 32 } },
    ];
    await withSubject(make, script, async (provider) => {
      const given = await provider.complete(ask("count me"));
      // No cache reported: 0 cached tokens, not a missing field.
      assert.deepEqual(given.usage, { prompt_tokens: 11, completion_tokens: 7, cached_tokens: 0 });
      const estimated = await provider.complete(ask("a prompt of some length"));
      assert.ok(estimated.usage, "usage is null");
      assert.ok(estimated.usage.prompt_tokens > 0 && Number.isInteger(estimated.usage.prompt_tokens));
      assert.ok(estimated.usage.completion_tokens > 0 && Number.isInteger(estimated.usage.completion_tokens));
      const cached = await provider.complete(ask("again"));
      assert.deepEqual(cached.usage, { prompt_tokens: 40, completion_tokens: 2, cached_tokens: 32 });
    });
  });

  Deno.test(`${name}: picks "match" entries by the last user message, others in order`, async () => {
    const script: ScriptEntry[] = [
      { match: "weather", content: "sunny" },
      { content: "first" },
      { content: "second" },
      { content: "third" },
    ];
    await withSubject(make, script, async (provider) => {
      assert.equal((await provider.complete(ask("hello"))).message.content, "first");
      // An earlier user message mentioning the match does not count.
      const older: Message[] = [
        { role: "user", content: "what is the weather?" },
        { role: "assistant", content: "let me see" },
        { role: "user", content: "never mind" },
      ];
      assert.equal((await provider.complete(ask("", { messages: older }))).message.content, "second");
      assert.equal((await provider.complete(ask("and the weather today?"))).message.content, "sunny");
      // A used match entry is not used again.
      assert.equal((await provider.complete(ask("weather again"))).message.content, "third");
    });
  });

  Deno.test(`${name}: rejects with a ProviderError when the script is used up`, async () => {
    await withSubject(make, [{ content: "only one" }], async (provider) => {
      assert.equal((await provider.complete(ask("one"))).message.content, "only one");
      await assert.rejects(provider.complete(ask("two")), (error) => {
        assert.ok(error instanceof ProviderError, `expected ProviderError, got ${error}`);
        assert.equal(error.contextOverflow, false);
        return true;
      });
    });
  });
}
