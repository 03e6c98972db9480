import assert from "node:assert/strict";
import { sentTokens, TokenRatio, truncatedTo } from "./real_window.ts";

Deno.test("real window: a count far below what was sent is a truncation; close counts and cached ones are not", () => {
  assert.equal(truncatedTo(8000, { prompt_tokens: 4096, completion_tokens: 1 }), 4096);
  // Tokenizers differ from chars/4, but not by a quarter on text they were calibrated on.
  assert.equal(truncatedTo(8000, { prompt_tokens: 6500, completion_tokens: 1 }), null);
  // A server whose tokenizer packs this text at 0.6 tokens per chars/4 token reads 4800 of 8000 whole.
  assert.equal(truncatedTo(8000, { prompt_tokens: 4800, completion_tokens: 1 }, 0.6), null);
  assert.equal(truncatedTo(8000, { prompt_tokens: 2048, completion_tokens: 1 }, 0.6), 2048);
  // Small requests: a 1 000-token gap is the least that counts.
  assert.equal(truncatedTo(1500, { prompt_tokens: 600, completion_tokens: 1 }), null);
  // A hosted API with a prompt cache may count cached input apart; no report, no verdict.
  assert.equal(truncatedTo(8000, { prompt_tokens: 2000, completion_tokens: 1, cached_tokens: 1500 }), null);
  assert.equal(truncatedTo(8000, null), null);
  assert.equal(truncatedTo(8000, { prompt_tokens: 0, completion_tokens: 0 }), null);
});

Deno.test("real window: the sent estimate counts contents and tool calls", () => {
  assert.equal(
    sentTokens([
      { role: "user", content: "x".repeat(40) },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c", name: "read_file", arguments: '{"path":"a"}' }],
      },
    ]),
    Math.ceil((40 + 9 + 12) / 4),
  );
});

Deno.test("real window: the token ratio follows requests read whole, within 0.5–2", () => {
  const ratio = new TokenRatio();
  assert.equal(ratio.value, 1);
  ratio.observe(100, { prompt_tokens: 30, completion_tokens: 1 });
  assert.equal(ratio.value, 1, "too small to say");
  ratio.observe(4000, { prompt_tokens: 2400, completion_tokens: 1 });
  assert.equal(ratio.value, 0.6);
  ratio.observe(4000, { prompt_tokens: 400, completion_tokens: 1 });
  assert.equal(ratio.value, 0.5);
});
