import assert from "node:assert/strict";
import { costOf, listedPrice, priceKey, priceOf, PRICES_TAKEN } from "./pricing.ts";

Deno.test("priceKey: vendor prefixes and snapshot suffixes are not part of a model's name; other suffixes are", () => {
  assert.equal(priceKey("gpt-4.1-mini-2025-04-14"), "gpt-4.1-mini");
  assert.equal(priceKey("openai/gpt-4o"), "gpt-4o");
  assert.equal(priceKey("claude-sonnet-4-20250514"), "claude-sonnet-4");
  assert.equal(priceKey("claude-3-7-sonnet-latest"), "claude-3-7-sonnet");
  assert.equal(priceKey("us.anthropic.claude-sonnet-4-20250514-v1:0"), "claude-sonnet-4");
  assert.equal(priceKey("claude-sonnet-4@20250514"), "claude-sonnet-4");
  assert.equal(listedPrice("gpt-4o-audio-preview"), null, "another model, not gpt-4o");
  assert.equal(listedPrice("llama3.1:8b"), null);
  assert.match(PRICES_TAKEN, /^\d{4}-\d{2}-\d{2}$/);
});

Deno.test("costOf: uncached input, cache reads, cache writes and output each at their price", () => {
  const sonnet = listedPrice("claude-sonnet-4-5")!;
  assert.deepEqual(sonnet, { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 });
  const usd = costOf(
    { prompt_tokens: 10_000, completion_tokens: 1_000, cached_tokens: 8_000, cache_write_tokens: 1_500 },
    sonnet,
  );
  assert.ok(Math.abs(usd - (500 * 3 + 8_000 * 0.3 + 1_500 * 3.75 + 1_000 * 15) / 1e6) < 1e-12);
  // An override without cache prices charges cached tokens the input price.
  assert.deepEqual(priceOf({ input: 2, output: 4 }), {
    input: 2,
    output: 4,
    cached_input: 2,
    cache_write: 2,
  });
});

Deno.test("the Responses-only models are listed; o1-pro and o3-pro charge cached reads at the input price", () => {
  assert.deepEqual(listedPrice("gpt-5.1-codex-max"), {
    input: 1.25,
    output: 10,
    cached_input: 0.125,
    cache_write: 1.25,
  });
  assert.deepEqual(listedPrice("openai/gpt-5-codex"), listedPrice("gpt-5.1-codex"));
  assert.deepEqual(listedPrice("o3-pro-2025-06-10"), {
    input: 20,
    output: 80,
    cached_input: 20,
    cache_write: 20,
  });
  assert.equal(listedPrice("o1-pro")?.output, 600);
});
