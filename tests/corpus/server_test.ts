import assert from "node:assert/strict";
import OpenAI from "openai";
import { toolHeavyCorpus } from "./corpus.ts";
import { startCorpusServer } from "./server.ts";
import { appendOnlyBaseline } from "./baseline.ts";
import { cachedTokens, PrefixCache } from "./prefix_cache.ts";
import type { ChatRequestBody } from "../_testing/openai_server.ts";

const TOOLS = [{
  type: "function" as const,
  function: { name: "read_file", description: "Read a file", parameters: { type: "object" } },
}];
type Messages = OpenAI.Chat.ChatCompletionMessageParam[];

function client(url: string, timeout = 60_000) {
  return new OpenAI({ apiKey: "k", baseURL: url, maxRetries: 0, timeout });
}

Deno.test("corpus server: plays a turn through the SDK, streaming or not, and counts cached tokens", async () => {
  const corpus = toolHeavyCorpus({ turns: 2 });
  await using server = await startCorpusServer({ corpus, window: 100_000 });
  const openai = client(server.url);
  const messages: Messages = [{ role: "system", content: "sys" }, {
    role: "user",
    content: corpus.prompts[0]!,
  }];
  const first = await openai.chat.completions.create({ model: "agent-model", messages, tools: TOOLS });
  const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
  assert.equal(call.id, "call_t1_s0");
  assert.deepEqual(JSON.parse(call.function.arguments), { path: corpus.reads[0]![0] });
  assert.equal(first.usage?.prompt_tokens_details?.cached_tokens, 0);
  messages.push(first.choices[0]!.message, {
    role: "tool",
    tool_call_id: call.id,
    content: corpus.files[corpus.reads[0]![0]!]!,
  });
  // The next request extends the first: the first one's whole prompt is cached.
  const stream = await openai.chat.completions.create({
    model: "agent-model",
    messages,
    tools: TOOLS,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  const steps = corpus.reads[0]!.length;
  if (steps === 1) assert.match(text, /^Turn 1: read /);
  const [r0, r1] = server.records;
  assert.equal(usage?.prompt_tokens, r1!.prompt_tokens);
  assert.equal(usage?.prompt_tokens_details?.cached_tokens, r1!.cached_tokens);
  assert.ok(r1!.cached_tokens > 0 && r1!.cached_tokens <= r0!.prompt_tokens, JSON.stringify(r1));
  assert.ok(r0!.prompt_tokens - r1!.cached_tokens <= 1, "all of the first request");
  assert.deepEqual([r0!.turn, r0!.step, r1!.turn, r1!.step], [1, 0, 1, 1]);
  assert.equal(server.stats().cached_tokens, r1!.cached_tokens);
});

Deno.test("corpus server: a request over the window gets OpenAI's context_length_exceeded naming the limit", async () => {
  const corpus = toolHeavyCorpus({ turns: 1 });
  await using server = await startCorpusServer({ corpus, window: 80 });
  const big = { role: "user" as const, content: `${corpus.prompts[0]} ${"x".repeat(400)}` };
  const error = await client(server.url).chat.completions.create({
    model: "agent-model",
    messages: [big],
    tools: TOOLS,
  }).catch((e) => e);
  assert.ok(error instanceof OpenAI.APIError);
  assert.equal(error.status, 400);
  assert.equal(error.code, "context_length_exceeded");
  assert.match(error.message, /maximum context length is 80 tokens/);
  assert.equal(server.stats().over_window, 1);
  // The allowed case: a request inside the window is answered.
  const ok = await client(server.url).chat.completions.create({
    model: "agent-model",
    messages: [{ role: "user", content: corpus.prompts[0]! }],
    tools: TOOLS,
  });
  assert.equal(ok.choices[0]!.finish_reason, "tool_calls");
  assert.equal(server.records[1]!.over_window, false);
});

Deno.test("corpus server: `truncate` answers an over-window request reporting only the window", async () => {
  const corpus = toolHeavyCorpus({ turns: 1 });
  await using server = await startCorpusServer({ corpus, window: 60, overWindow: "truncate" });
  const reply = await client(server.url).chat.completions.create({
    model: "agent-model",
    messages: [{ role: "user", content: `${"y".repeat(400)} ${corpus.prompts[0]}` }],
    tools: TOOLS,
  });
  assert.equal(reply.usage?.prompt_tokens, 60);
  assert.ok(server.records[0]!.prompt_tokens > 60);
});

function summaryRequest(text: string): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  return {
    model: "summary-model",
    messages: [{ role: "system", content: "You compact" }, {
      role: "user",
      content: `<messages>\n${text}\n</messages>`,
    }],
    max_tokens: 1000,
  };
}

Deno.test("corpus server: summary behaviours — ok, http500, garbage, empty, longer", async () => {
  const corpus = toolHeavyCorpus({ turns: 3 });
  const middle = `[user] ${corpus.prompts[0]}\n[user] ${corpus.prompts[1]}\n${
    "[tool result] ...\n".repeat(200)
  }`;
  const answer = async (summary: "ok" | "http500" | "garbage" | "empty" | "longer") => {
    await using server = await startCorpusServer({ corpus, window: 100_000, summary });
    const result = await client(server.url).chat.completions.create(summaryRequest(middle)).catch((e) => e);
    assert.equal(server.records[0]!.kind, "summary");
    return result;
  };
  const ok = (await answer("ok")).choices[0].message.content as string;
  for (
    const section of ["Goal", "Constraints", "Progress", "Decisions", "Files and identifiers", "Next steps"]
  ) {
    assert.match(ok, new RegExp(`^## ${section}$`, "m"));
  }
  assert.match(ok, /User turns covered: 1–2\./);
  assert.ok(ok.length / 4 > 200 && ok.length / 4 < 400, `about 300 tokens: ${ok.length / 4}`);
  const failed = await answer("http500");
  assert.ok(failed instanceof OpenAI.APIError && failed.status === 500);
  assert.doesNotMatch((await answer("garbage")).choices[0].message.content, /## /);
  assert.equal((await answer("empty")).choices[0].message.content, "");
  const longer = (await answer("longer")).choices[0].message.content as string;
  assert.ok(longer.length > middle.length, `${longer.length} > ${middle.length}`);
});

Deno.test("corpus server: a hanging summary model answers nothing before the client's timeout", async () => {
  const corpus = toolHeavyCorpus({ turns: 1 });
  await using server = await startCorpusServer({ corpus, window: 100_000, summary: "hang" });
  const error = await client(server.url, 300).chat.completions.create(summaryRequest("x")).catch((e) => e);
  assert.ok(error instanceof OpenAI.APIConnectionTimeoutError, String(error));
});

Deno.test("corpus server: missing_turns names user turns neither verbatim nor in a summary", async () => {
  const corpus = toolHeavyCorpus({ turns: 5 });
  await using server = await startCorpusServer({ corpus, window: 100_000 });
  const ask = (messages: Messages) =>
    client(server.url).chat.completions.create({ model: "agent-model", messages, tools: TOOLS });
  await ask([
    { role: "user", content: corpus.prompts[0]! },
    { role: "assistant", content: "[Hermes compaction summary] …\nUser turns covered: 2–3." },
    { role: "user", content: corpus.prompts[4]! },
  ]);
  assert.deepEqual(server.records[0]!.missing_turns, [4]);
  assert.equal(server.stats().requests_missing_turns, 1);
});

Deno.test("prefix cache: longest prefix with any of the previous 8 requests of the same model", () => {
  const cache = new PrefixCache(8);
  const body = (model: string, ...texts: string[]): ChatRequestBody => ({
    model,
    messages: texts.map((content) => ({ role: "user", content })),
  });
  assert.equal(cache.read(body("a", "hello", "world")).sharedChars, 0);
  const again = cache.read(body("a", "hello", "world", "more"));
  assert.equal(again.sharedChars, cache.read(body("a", "hello", "world"), { remember: false }).chars);
  // Another model shares nothing; a request differing inside the first message shares up to the change.
  assert.equal(cache.read(body("b", "hello", "world")).sharedChars, 0);
  const edited = cache.read(body("a", "help", "world"));
  assert.equal(edited.sharedChars, "hel".length);
  // After 8 unrelated requests the first ones are forgotten.
  for (let i = 0; i < 8; i++) cache.read(body("a", `other ${i}`));
  assert.equal(cache.read(body("a", "hello", "world")).sharedChars, 0);
  assert.equal(cachedTokens(100, { chars: 400, sharedChars: 101 }), 25);
});

Deno.test("append-only baseline: equals the cache replaying every append-only request", () => {
  const corpus = toolHeavyCorpus({ turns: 6, maxBytes: 4096, logBytes: 3000 });
  const system = "sys";
  const baseline = appendOnlyBaseline(corpus, { system, tools: TOOLS });
  const cache = new PrefixCache(8);
  const messages: NonNullable<ChatRequestBody["messages"]> = [{ role: "system", content: system }];
  let prompt = 0;
  let cached = 0;
  let requests = 0;
  corpus.prompts.forEach((text, i) => {
    messages.push({ role: "user", content: text });
    for (let step = 0;; step++) {
      const body = { model: "m", tools: TOOLS, messages: [...messages] };
      const tokens = promptTokens(body);
      prompt += tokens;
      cached += cachedTokens(tokens, cache.read(body));
      requests++;
      const reply = corpus.reply(i + 1, step);
      if (reply.kind === "answer") {
        messages.push({ role: "assistant", content: reply.content });
        break;
      }
      const call = {
        id: reply.id,
        type: "function",
        function: { name: reply.name, arguments: reply.arguments },
      };
      messages.push({ role: "assistant", content: null, tool_calls: [call] });
      messages.push({
        role: "tool",
        tool_call_id: reply.id,
        content: corpus.files[JSON.parse(reply.arguments).path]!,
      });
    }
  });
  assert.deepEqual(baseline, {
    requests,
    prompt_tokens: prompt,
    cached_tokens: cached,
    cached_share: cached / prompt,
  });
  assert.ok(baseline.cached_share > 0.5);
});

function promptTokens(body: ChatRequestBody): number {
  let chars = JSON.stringify(body.tools).length;
  for (const m of body.messages ?? []) {
    chars += typeof m.content === "string" ? m.content.length : 0;
    for (const c of (m.tool_calls ?? []) as { function: { name: string; arguments: string } }[]) {
      chars += c.function.name.length + c.function.arguments.length;
    }
  }
  return Math.ceil(chars / 4);
}
