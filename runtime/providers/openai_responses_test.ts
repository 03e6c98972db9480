import assert from "node:assert/strict";
import { fromResponse, toResponsesBody } from "./openai_responses.ts";
import type OpenAI from "./openai_sdk.ts";
import type { Message } from "../core/types.ts";

const transcript: Message[] = [
  { role: "system", content: "terse" },
  { role: "user", content: "look" },
  {
    role: "assistant",
    content: "Looking.",
    tool_calls: [{ id: "call_1", name: "list_dir", arguments: "{}" }],
    reasoning: [
      { type: "thinking", thinking: "from another provider", signature: "sig" },
      { type: "openai_reasoning", id: "rs_1", encrypted_content: "enc", summary: ["plan"] },
    ],
  },
  { role: "tool", tool_call_id: "call_1", name: "list_dir", content: "job.yaml" },
];

Deno.test("toResponsesBody: items in order, OpenAI reasoning only, stateless, reasoning settings for a reasoning model", () => {
  const body = toResponsesBody(
    { model: "gpt-5-codex", messages: transcript, tools: [], max_tokens: 100, temperature: 0.2 },
    { reasoning: true, reasoningEffort: "low", promptCacheKey: "hermes-job-nightly" },
  );
  assert.deepEqual(body.input, [
    { role: "system", content: "terse" },
    { role: "user", content: "look" },
    {
      type: "reasoning",
      id: "rs_1",
      encrypted_content: "enc",
      summary: [{ type: "summary_text", text: "plan" }],
    },
    { role: "assistant", content: "Looking." },
    { type: "function_call", call_id: "call_1", name: "list_dir", arguments: "{}" },
    { type: "function_call_output", call_id: "call_1", output: "job.yaml" },
  ]);
  assert.equal(body.store, false);
  assert.deepEqual(body.include, ["reasoning.encrypted_content"]);
  assert.deepEqual(body.reasoning, { effort: "low" });
  assert.equal(body.max_output_tokens, 100);
  assert.equal(body.prompt_cache_key, "hermes-job-nightly");
  assert.equal("temperature" in body, false);
});

Deno.test("toResponsesBody: a classic model gets its temperature and no reasoning settings", () => {
  const body = toResponsesBody({ model: "gpt-4.1", messages: transcript, tools: [], temperature: 0.2 }, {
    reasoningEffort: "low",
  });
  assert.equal(body.temperature, 0.2);
  assert.equal("include" in body, false);
  assert.equal("reasoning" in body, false);
});

const base = {
  id: "resp_1",
  object: "response",
  created_at: 0,
  output_text: "",
  error: null,
  incomplete_details: null,
  instructions: null,
  metadata: null,
  model: "gpt-5-codex",
  parallel_tool_calls: true,
  temperature: null,
  tool_choice: "auto",
  tools: [],
  top_p: null,
} as const;

Deno.test("fromResponse: reasoning without encrypted content is not kept; a refusal with a call is not a filter", () => {
  const response = {
    ...base,
    status: "completed",
    output: [
      { type: "reasoning", id: "rs_1", summary: [] },
      {
        type: "message",
        id: "m",
        role: "assistant",
        status: "completed",
        content: [{ type: "refusal", refusal: "no" }],
      },
      { type: "function_call", call_id: "c1", name: "list_dir", arguments: "{}" },
    ],
  } as unknown as OpenAI.Responses.Response;
  const reply = fromResponse(response);
  assert.equal(reply.message.reasoning, undefined);
  assert.equal(reply.finish_reason, "tool_calls");
  assert.equal(reply.usage, null);
});

Deno.test("ResponsesStream: an error event raises an APIError carrying its code; a stream without a terminal event is incomplete", async () => {
  const { ResponsesStream } = await import("./openai_responses.ts");
  const { IncompleteResponseStream } = await import("./openai_responses_errors.ts");
  const { default: OpenAI } = await import("./openai_sdk.ts");
  const stream = new ResponsesStream();
  assert.deepEqual(
    stream.add({
      type: "response.output_text.delta",
      delta: "Hel",
      item_id: "m",
      output_index: 0,
      content_index: 0,
      logprobs: [],
      sequence_number: 1,
    }),
    { text: "Hel", chars: 3 },
  );
  assert.throws(() => stream.result(), IncompleteResponseStream);
  assert.throws(
    () =>
      stream.add({
        type: "error",
        code: "rate_limit_exceeded",
        message: "slow down",
        param: null,
        sequence_number: 2,
      }),
    (error: unknown) => error instanceof OpenAI.APIError && error.code === "rate_limit_exceeded",
  );
});
