/**
 * A summary model with a smaller window: the middle is summarised in chunks that fit it,
 * folded iteratively; a compactor whose summary window cannot take even one chunk says so when it starts.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { createLogger } from "../core/log.ts";
import { CHUNK_CAP, MAX_CHUNKS, planChunks } from "./chunks.ts";
import { compactorFor, fixture, scriptedModel, transcript } from "./_testing.ts";
import { approxTokens } from "./estimate.ts";
import type { PlanRow } from "./rows.ts";
import { renderedSize, requestBudget, summaryMaxTokens } from "./summary.ts";

function row(id: number, chars: number, extra: Partial<PlanRow> = {}): PlanRow {
  return {
    id,
    seq: id,
    pos: id,
    role: "assistant",
    kind: "message",
    chars,
    tokens: Math.ceil(chars / 4),
    prompt_tokens: null,
    completion_tokens: null,
    ...extra,
  };
}

Deno.test("chunks: one request when the middle fits, chunks of the smaller window when it does not", () => {
  const middle = [
    row(1, 500, { kind: "summary" }),
    ...Array.from({ length: 40 }, (_, i) => row(i + 2, 3000)),
  ];
  assert.equal(planChunks(middle, 8000).length, 1, "the session's own window: one request, clipped");
  const chunks = planChunks(middle, 8000, { smallerModel: true });
  assert.ok(chunks.length > 1);
  assert.deepEqual(chunks[0]!.previous.map((r) => r.id), [1], "the first chunk updates the stored summary");
  assert.ok(chunks.slice(1).every((c) => c.previous.length === 0), "later ones update the summary so far");
  assert.deepEqual(
    chunks.flatMap((c) => c.shown.map((r) => r.id)),
    middle.slice(1).map((r) => r.id),
    "in order",
  );
  const budget = requestBudget(8000) - summaryMaxTokens(8000) * 4;
  for (const chunk of chunks) {
    assert.ok(chunk.cap >= CHUNK_CAP, `cap ${chunk.cap}`);
    assert.ok(chunk.shown.reduce((n, r) => n + renderedSize(r, chunk.cap), 0) <= budget);
  }
  assert.deepEqual(planChunks(middle.slice(0, 3), 8000, { smallerModel: true }).length, 1, "small: one");
  const huge = Array.from({ length: 2000 }, (_, i) => row(i + 1, 3000));
  const capped = planChunks(huge, 8000, { smallerModel: true });
  assert.equal(capped.length, MAX_CHUNKS);
  assert.equal(capped[0]!.omitted + capped.reduce((n, c) => n + c.shown.length, 0), 2000);
  assert.equal(capped.at(-1)!.shown.at(-1)!.id, 2000, "the newest rows are kept");
});

Deno.test("chunks: a smaller summary model gets requests that fit it, each folding in the one before", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(40, { textChars: 1200, toolChars: 2000 }));
  const SUMMARY_WINDOW = 4000;
  let call = 0;
  const tooLong: number[] = [];
  const model = scriptedModel((request) => {
    const tokens = request.messages.reduce((n, m) => n + approxTokens(m), 0) + (request.max_tokens ?? 0);
    if (tokens > SUMMARY_WINDOW) tooLong.push(tokens);
    return `## Goal\nship\n## Progress\nsummary of chunk ${++call}`;
  });
  const compactor = compactorFor(fx, {
    provider: model,
    context_window: 32_000,
    summary_model: "small-model",
    config: { summary_context_window: SUMMARY_WINDOW, prune_tool_results: false },
  });
  const outcome = await compactor.compact(fx.sessionId, {});
  assert.equal(outcome.outcome, "committed", outcome.note);
  assert.ok(model.requests.length > 1, `${model.requests.length} requests`);
  assert.deepEqual(tooLong, [], "every request fits the summary model's window");
  assert.ok(model.requests.every((r) => r.model === "small-model"));
  for (let i = 1; i < model.requests.length; i++) {
    assert.match(
      model.requests[i]!.messages[1]!.content,
      new RegExp(
        `<previous-summary>\\n## Goal\\nship\\n## Progress\\nsummary of chunk ${i}\\n</previous-summary>`,
      ),
    );
  }
  const summary = (await fx.store.activeMessages(fx.sessionId)).find((m) => m.kind === "summary")!;
  assert.ok(
    summary.content.endsWith(`summary of chunk ${model.requests.length}`),
    "the last answer is stored",
  );
  const [row] = await fx.store.compactionLog(fx.sessionId);
  assert.equal(row!.detail.summary_calls, model.requests.length);
});

Deno.test("chunks: a summary window too small for one request is named when the compactor starts", async () => {
  await using fx = await fixture(new ManualClock());
  const lines: string[] = [];
  const log = createLogger({ write: (line) => lines.push(line) });
  compactorFor(fx, { provider: scriptedModel(), log, config: { summary_context_window: 3000 } });
  assert.deepEqual(lines, [], "3000 tokens hold one request");
  compactorFor(fx, { provider: scriptedModel(), log, config: { summary_context_window: 800 } });
  assert.equal(lines.length, 1);
  assert.match(
    lines[0]!,
    /^hermes warn: \[compaction\] the summary model's window \(800 tokens, compaction\.summary_context_window\) cannot take even one summary request \(about \d+ tokens\)/,
  );
});
