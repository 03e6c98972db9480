import assert from "node:assert/strict";
import type { Message } from "../core/types.ts";
import type { ModelRequest } from "./provider.ts";
import { finishReason, fromWireResponse, MAX_BREAKPOINTS, toWireRequest, usageOf } from "./anthropic_wire.ts";

const TOOL = { name: "read_file", description: "Read", parameters: { type: "object", properties: {} } };
const THINKING = { type: "thinking" as const, thinking: "hmm", signature: "sig" };

function transcript(rounds: number): Message[] {
  const messages: Message[] = [{ role: "system", content: "Be brief." }, { role: "user", content: "start" }];
  for (let i = 0; i < rounds; i++) {
    messages.push(
      {
        role: "assistant",
        content: "",
        reasoning: [THINKING],
        tool_calls: [{ id: `t${i}`, name: "read_file", arguments: "{}" }],
      },
      { role: "tool", tool_call_id: `t${i}`, name: "read_file", content: `result ${i}` },
    );
  }
  return messages;
}

const request = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "m",
  messages,
  tools: [TOOL],
  ...extra,
});

function marked(body: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}.${i}`));
    else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (k === "cache_control") out.push(path.slice(1));
        else walk(v, `${path}.${k}`);
      }
    }
  };
  walk(body, "");
  return out;
}

Deno.test("breakpoints: system, head, previous end and moving end — at most four, never on thinking", () => {
  for (const rounds of [0, 1, 2, 7]) {
    const body = toWireRequest(request(transcript(rounds)), { defaultMaxTokens: 1000 });
    const marks = marked(body);
    assert.ok(marks.length <= MAX_BREAKPOINTS, `${rounds} rounds: ${marks}`);
    assert.ok(marks.includes("system.0"), "tools+system are marked");
    assert.ok(marks.includes("messages.0.content.0"), "the head is marked");
    assert.ok(marks.includes(`messages.${body.messages.length - 1}.content.0`), "the moving end is marked");
    for (const mark of marks) assert.doesNotMatch(JSON.stringify(mark), /thinking/);
    if (rounds >= 2) assert.deepEqual(marks.length, 4);
  }
});

Deno.test("breakpoints: without a system prompt the last tool carries the first; off with cache: false", () => {
  const body = toWireRequest(request([{ role: "user", content: "hi" }]), { defaultMaxTokens: 10 });
  assert.deepEqual(marked(body).sort(), ["messages.0.content.0", "tools.0"]);
  assert.deepEqual(marked(toWireRequest(request(transcript(3)), { defaultMaxTokens: 10, cache: false })), []);
});

Deno.test("the same transcript gives the same bytes (a stable prefix), reasoning replayed first", () => {
  const a = JSON.stringify(toWireRequest(request(transcript(3)), { defaultMaxTokens: 10 }));
  const b = JSON.stringify(toWireRequest(request(transcript(3)), { defaultMaxTokens: 10 }));
  assert.equal(a, b);
  const body = toWireRequest(request(transcript(1)), { defaultMaxTokens: 10 });
  assert.deepEqual(body.messages[1]!.content.map((c) => c.type), ["thinking", "tool_use"]);
  assert.equal(body.messages[2]!.content[0]!.type, "tool_result");
});

Deno.test("tool results of one round are one user turn; a transcript starting with the assistant gets a user turn", () => {
  const body = toWireRequest(
    request([
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "a", name: "x", arguments: "{}" }, { id: "b", name: "x", arguments: "" }],
      },
      { role: "tool", tool_call_id: "a", content: "1" },
      { role: "tool", tool_call_id: "b", content: "2" },
      { role: "user", content: "next" },
    ]),
    { defaultMaxTokens: 10, cache: false },
  );
  assert.deepEqual(body.messages.map((m) => m.role), ["user", "assistant", "user"]);
  assert.deepEqual(body.messages[2]!.content.map((c) => c.type), ["tool_result", "tool_result", "text"]);
});

Deno.test("thinking: the budget goes out, max_tokens above it; no temperature is ever sent", () => {
  const body = toWireRequest(request([{ role: "user", content: "hi" }], { temperature: 0.2 }), {
    defaultMaxTokens: 8192,
    thinking: { budget_tokens: 2048 },
  });
  assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.equal(body.max_tokens, 2048 + 8192);
  assert.equal("temperature" in body, false);
});

Deno.test("output schema: a forced tool without other tools, any with them, auto with thinking; non-objects wrapped", () => {
  const schema = { type: "object", properties: { a: { type: "string" } } };
  const output = { name: "final_answer", schema };
  const alone = toWireRequest({
    ...request([{ role: "user", content: "q" }]),
    tools: [],
    output_schema: output,
  }, {
    defaultMaxTokens: 10,
  });
  assert.deepEqual(alone.tool_choice, { type: "tool", name: "final_answer" });
  const withTools = toWireRequest(request([{ role: "user", content: "q" }], { output_schema: output }), {
    defaultMaxTokens: 10,
  });
  assert.deepEqual(withTools.tool_choice, { type: "any" });
  const thinking = toWireRequest(request([{ role: "user", content: "q" }], { output_schema: output }), {
    defaultMaxTokens: 10,
    thinking: { budget_tokens: 1024 },
  });
  assert.deepEqual(thinking.tool_choice, { type: "auto" });

  const list = { name: "final_answer", schema: { type: "array", items: { type: "number" } } };
  const reply = fromWireResponse(
    {
      content: [{ type: "tool_use", id: "t", name: "final_answer", input: { value: [1, 2] } }],
      stop_reason: "tool_use",
    },
    request([], { output_schema: list }),
  );
  assert.equal(reply.message.content, "[1,2]");
  assert.equal(reply.message.tool_calls, undefined);
  assert.equal(reply.finish_reason, "stop");
});

Deno.test("replies: text, tool calls and signed reasoning; stop reasons in Hermes' words; usage summed", () => {
  const reply = fromWireResponse({
    content: [
      { type: "thinking", thinking: "plan", signature: "s1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Looking." },
      { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a" } },
    ],
    stop_reason: "tool_use",
  }, request([]));
  assert.equal(reply.message.content, "Looking.");
  assert.deepEqual(reply.message.tool_calls, [{
    id: "toolu_1",
    name: "read_file",
    arguments: '{"path":"a"}',
  }]);
  assert.deepEqual(reply.message.reasoning, [
    { type: "thinking", thinking: "plan", signature: "s1" },
    { type: "redacted_thinking", data: "opaque" },
  ]);
  assert.equal(reply.finish_reason, "tool_calls");
  assert.equal(finishReason("end_turn", false), "stop");
  assert.equal(finishReason("stop_sequence", false), "stop");
  assert.equal(finishReason("max_tokens", false), "length");
  assert.equal(finishReason("refusal", false), "content_filter");
  assert.deepEqual(
    usageOf({
      input_tokens: 5,
      output_tokens: 7,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
    }),
    { prompt_tokens: 125, completion_tokens: 7, cached_tokens: 100, cache_write_tokens: 20 },
  );
});
