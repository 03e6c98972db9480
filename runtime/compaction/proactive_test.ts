/**
 * Proactive pruning with a floor: between turns, below the threshold, old tool results are
 * pruned only when that frees at least `compaction.prune_min` tokens (reason `proactive_prune`).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { compactorFor, fixture, orphanProblems, scriptedModel, transcript } from "./_testing.ts";
import { estimateMessages } from "./estimate.ts";

Deno.test("proactive prune: below the threshold, pruning that frees at least prune_min commits", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(12, { toolChars: 1200 }));
  const before = await fx.store.activeMessages(fx.sessionId);
  assert.ok(estimateMessages(before) < 6000, "under the hard threshold");
  const model = scriptedModel();
  const outcome = await compactorFor(fx, {
    provider: model,
    context_window: 8000,
    // A tail budget that holds the last 20 messages, so they are the tail.
    config: { prune_min: 500, tail_budget: 0.25 },
  })
    .afterTurn(fx.sessionId, {});
  assert.deepEqual([outcome?.kind, outcome?.outcome], ["prune_tool_results", "committed"]);
  assert.ok(outcome!.before_tokens - outcome!.after_tokens >= 500);
  assert.equal(model.requests.length, 0);
  const event = fx.events.find((e) => e.type === "compaction")!;
  assert.ok(event.type === "compaction");
  assert.equal(event.reason, "proactive_prune");
  assert.equal(fx.postCompaction[0]?.reason, "proactive_prune");
  const after = await fx.store.activeMessages(fx.sessionId);
  assert.ok(after.some((m) => m.kind === "pruned"));
  assert.deepEqual(
    after.slice(-20).map((m) => m.id),
    before.slice(-20).map((m) => m.id),
    "the tail is untouched",
  );
  assert.deepEqual(orphanProblems(after), []);
  assert.deepEqual((await fx.store.compactionLog(fx.sessionId)).map((r) => [r.kind, r.reason, r.outcome]), [
    ["prune_tool_results", "proactive_prune", "committed"],
  ]);
});

Deno.test("proactive prune: a prune that frees less than prune_min does not run, and logs nothing", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(12, { toolChars: 1200 }));
  const before = await fx.store.allMessages(fx.sessionId);
  const outcome = await compactorFor(fx, { provider: scriptedModel(), config: { prune_min: 100_000 } })
    .afterTurn(fx.sessionId, {});
  assert.equal(outcome, null);
  assert.deepEqual(await fx.store.allMessages(fx.sessionId), before);
  assert.deepEqual(await fx.store.compactionLog(fx.sessionId), []);
  assert.equal(fx.events.length, 0);
});

Deno.test("proactive prune: off without prune_min", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(12, { toolChars: 1200 }));
  assert.equal(await compactorFor(fx, { provider: scriptedModel() }).afterTurn(fx.sessionId, {}), null);
  assert.deepEqual(await fx.store.compactionLog(fx.sessionId), []);
});
