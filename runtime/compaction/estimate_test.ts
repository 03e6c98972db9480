import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { currentProcess } from "../core/process_identity.ts";
import { fixture } from "./_testing.ts";
import type { Store } from "../store/store.ts";
import {
  approxTokens,
  calibrationFrom,
  estimateFromInput,
  estimateMessages,
  type EstimateRow,
  estimateTokens,
} from "./estimate.ts";

/** The whole-transcript estimate, checked against the cheap one the compactor runs before every model call. */
async function estimate(store: Store, sessionId: string): Promise<number> {
  const full = estimateMessages(await store.activeMessages(sessionId));
  assert.equal(estimateFromInput(await store.estimateInput(sessionId)), full, "the cheap estimate agrees");
  return full;
}

Deno.test("estimate: chars/4 of everything when there is no real reading yet", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, [
    { role: "system", content: "x".repeat(400) },
    { role: "user", content: "y".repeat(41) },
  ]);
  assert.equal(await estimate(fx.store, fx.sessionId), 100 + 11);
});

Deno.test("estimate: the last real prompt_tokens plus chars/4 of what was appended after it", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, [
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
  assert.equal(await estimate(fx.store, fx.sessionId), 1200 + 30 + 100);
});

Deno.test("estimate: a reading taken before the last compaction is ignored", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, [
    { role: "user", content: "u".repeat(40) },
    { role: "assistant", content: "a".repeat(40), prompt_tokens: 90_000, completion_tokens: 10 },
    { role: "user", content: "[Hermes compaction summary] s".padEnd(80, "s"), kind: "summary" },
  ]);
  assert.equal(await estimate(fx.store, fx.sessionId), 10 + 10 + 20);
});

Deno.test("estimate: tool call arguments count", () => {
  assert.equal(
    approxTokens({ content: "", tool_calls: [{ id: "1234", name: "shell", arguments: '{"a":1}abc' }] }),
    5,
  );
});

Deno.test("estimate: the cheap input reads only from the newest reading on, and agrees after a compaction", async () => {
  await using fx = await fixture(new ManualClock());
  const history = Array.from({ length: 200 }, (_, i) => ({
    role: i % 2 ? "assistant" as const : "user" as const,
    content: `m${i}`.padEnd(40, "x"),
    ...(i % 2 ? { prompt_tokens: 1000 + i, completion_tokens: 3 } : {}),
  }));
  const rows = await fx.store.appendMessages(fx.sessionId, history);
  await fx.store.appendMessages(fx.sessionId, [{ role: "user", content: "next".padEnd(80, "y") }]);
  const input = await fx.store.estimateInput(fx.sessionId);
  assert.equal(input.reading?.seq, 200);
  assert.equal(input.after.length, 1, "one row after the reading, not the 201 active ones");
  assert.equal(await estimate(fx.store, fx.sessionId), 1199 + 3 + 20);

  const holder = currentProcess();
  await fx.store.acquireLease({ sessionId: fx.sessionId, holder, now: fx.clock.now(), ttlMs: 60_000 });
  const commit = await fx.store.commitCompaction({
    sessionId: fx.sessionId,
    nonce: holder.nonce,
    now: fx.clock.now(),
    kind: "summarize",
    reason: "manual",
    archive: rows.slice(1, 150).map((r) => r.id),
    insert: [{ role: "user", content: "[summary]".padEnd(400, "s"), kind: "summary", pos: rows[1]!.pos }],
    beforeTokens: 0,
    detail: {},
    estimate: () => 0,
  });
  assert.equal(commit.committed, true);
  assert.equal((await fx.store.estimateInput(fx.sessionId)).reading, null, "the old reading is stale now");
  assert.equal(await estimate(fx.store, fx.sessionId), 10 + 100 + 50 * 10 + 20);
});

Deno.test("estimate: the calibration ratio is the newest usable reading over chars/4 of what it measured", () => {
  const row = (seq: number, extra: Partial<EstimateRow> = {}): EstimateRow => ({
    seq,
    role: "user",
    kind: "message",
    tokens: 100,
    prompt_tokens: null,
    completion_tokens: null,
    ...extra,
  });
  const reading = (seq: number, prompt: number) => row(seq, { role: "assistant", prompt_tokens: prompt });
  assert.equal(calibrationFrom([row(1), row(2)]), null, "no reading");
  assert.equal(calibrationFrom([row(1), row(2), reading(3, 300), row(4)]), 1.5);
  assert.equal(calibrationFrom([row(1), reading(2, 50), row(3), reading(4, 600)]), 2, "the newest reading");
  assert.equal(
    calibrationFrom([row(1), reading(2, 300), row(3, { kind: "summary" })]),
    null,
    "a reading older than a compaction measured another transcript",
  );
  assert.equal(calibrationFrom([row(1), reading(2, 1)]), 0.25, "a broken usage report is clamped");
  assert.equal(calibrationFrom([row(1), reading(2, 100_000)]), 4);
  assert.equal(
    estimateTokens([row(1), reading(2, 300), row(3)], 2),
    300 + 100 + 200,
    "later rows are scaled",
  );
});
