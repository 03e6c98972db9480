/**
 * OpenAI reasoning models through the real CLI, against a scripted server that refuses what OpenAI refuses
 * (`max_tokens` and a temperature for a reasoning model, `reasoning_effort` for any other): the output limit
 * goes as `max_completion_tokens`, `model.reasoning_effort` is sent, reasoning tokens come back in usage;
 * which models are reasoning models follows their names, and `model.reasoning` overrides that.
 */
import assert from "node:assert/strict";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { openAIParameterRules, startOpenAIServer } from "../_testing/openai_server.ts";
import { isReasoningModel } from "../../runtime/providers/model.ts";

async function run(model: string, extra: string) {
  await using server = await startOpenAIServer({
    refuse: (body) =>
      openAIParameterRules({ ...body, model: body.model === "house-reasoner" ? "o3" : String(body.model) }),
    script: [{
      content: "thought it through",
      usage: { prompt_tokens: 20, completion_tokens: 900, reasoning_tokens: 880 },
    }],
  }).then((s) => Object.assign(s, { [Symbol.asyncDispose]: () => s.close() }));
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: think\nmodel: { name: ${model}, base_url: "${server.url}", api_key_env: none, ` +
      `max_output_tokens: 4000, temperature: 0.2${extra} }\nprompt: think\n`,
  });
  const outcome = await runEvents(dir);
  await Deno.remove(dir, { recursive: true });
  return { ...outcome, body: server.requests[0]! };
}

Deno.test("reasoning (o4-mini): max_completion_tokens and reasoning_effort sent, no temperature; reasoning tokens reported", async () => {
  const { code, stderr, events, body } = await run("o4-mini", ", reasoning_effort: high");
  assert.equal(code, 0, stderr);
  assert.equal(body.max_completion_tokens, 4000);
  assert.equal(body.reasoning_effort, "high");
  assert.equal("max_tokens" in body, false);
  assert.equal("temperature" in body, false);
  assert.equal((events.at(-1)!.usage as { reasoning_tokens: number }).reasoning_tokens, 880);
});

Deno.test("reasoning (gpt-4.1-mini): a classic model keeps max_tokens and temperature, no reasoning_effort", async () => {
  const { code, stderr, body } = await run("gpt-4.1-mini", ", reasoning_effort: low");
  assert.equal(code, 0, stderr);
  assert.equal(body.max_tokens, 4000);
  assert.equal(body.temperature, 0.2);
  assert.equal("max_completion_tokens" in body, false);
  assert.equal("reasoning_effort" in body, false);
});

Deno.test("reasoning: model.reasoning marks a model whose name does not tell (a router's alias), and unmarks one", async () => {
  // The server runs "house-reasoner" as a reasoning model: it refuses max_tokens for it.
  const refused = await run("house-reasoner", "");
  assert.equal(refused.code, 1);
  assert.match(String(refused.events.at(-1)!.error), /'max_tokens' is not supported with this model/);
  const told = await run("house-reasoner", ", reasoning: true");
  assert.equal(told.code, 0, told.stderr);
  assert.equal(told.body.max_completion_tokens, 4000);
  const unmarked = await run("o3", ", reasoning: false");
  assert.equal(unmarked.body.max_tokens, 4000);
  assert.equal(unmarked.code, 1, "the server refuses max_tokens for o3");
});

Deno.test("isReasoningModel: the o-series and the gpt-5 family by name, router prefixes and snapshots included", () => {
  for (
    const name of [
      "o1",
      "o1-mini",
      "o3",
      "o3-mini-2025-01-31",
      "o4-mini",
      "gpt-5",
      "gpt-5-mini",
      "gpt-5.1",
      "openai/o3",
    ]
  ) {
    assert.equal(isReasoningModel(name), true, name);
  }
  for (
    const name of ["gpt-4.1", "gpt-4o-mini", "gpt-5-chat-latest", "claude-sonnet-4", "llama3", "omni", "o"]
  ) {
    assert.equal(isReasoningModel(name), false, name);
  }
});
