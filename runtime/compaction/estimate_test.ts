import assert from "node:assert/strict";
import { ManualClock } from "../core/clock.ts";
import { fixture } from "./_testing.ts";
import { approxTokens, estimateMessages } from "./estimate.ts";

Deno.test("estimate: chars/4 of everything when there is no real reading yet", async () => {
  await using fx = await fixture(new ManualClock());
  fx.store.appendMessages(fx.sessionId, [
    { role: "system", content: "x".repeat(400) },
    { role: "user", content: "y".repeat(41) },
  ]);
  assert.equal(estimateMessages(fx.store.activeMessages(fx.sessionId)), 100 + 11);
});

Deno.test("estimate: the last real prompt_tokens plus chars/4 of what was appended after it", async () => {
  await using fx = await fixture(new ManualClock());
  fx.store.appendMessages(fx.sessionId, [
    { role: "system", content: "x".repeat(4000) },
    { role: "user", content: "hello" },
    { role: "assistant", content: "old", prompt_tokens: 500, completion_tokens: 7 },
    { role: "user", content: "again" },
    {
      role: "assistant",
      content: "z".repeat(80),
      tool_calls: [{ id: "c1", name: "shell", arguments: "{}" }],
      prompt_tokens: 1200,
      completion_tokens: 30,
    },
    { role: "tool", tool_call_id: "c1", name: "shell", content: "r".repeat(400) },
  ]);
  // The newest reading (1200) + its own completion (30) + the tool result (100); older rows are inside 1200.
  assert.equal(estimateMessages(fx.store.activeMessages(fx.sessionId)), 1200 + 30 + 100);
});

Deno.test("estimate: a reading taken before the last compaction is ignored", async () => {
  await using fx = await fixture(new ManualClock());
  fx.store.appendMessages(fx.sessionId, [
    { role: "user", content: "u".repeat(40) },
    { role: "assistant", content: "a".repeat(40), prompt_tokens: 90_000, completion_tokens: 10 },
    { role: "user", content: "[Hermes compaction summary] s".padEnd(80, "s"), kind: "summary" },
  ]);
  assert.equal(estimateMessages(fx.store.activeMessages(fx.sessionId)), 10 + 10 + 20);
});

Deno.test("estimate: tool call arguments count", () => {
  assert.equal(
    approxTokens({ content: "", tool_calls: [{ id: "1234", name: "shell", arguments: '{"a":1}abc' }] }),
    5,
  );
});
