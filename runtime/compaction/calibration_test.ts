/**
 * One token basis: before, after, the anti-growth refusal and the ineffective verdict of a
 * pass all use chars/4 scaled by one calibration ratio — the provider's real prompt_tokens ÷ chars/4 of the
 * request it measured — and the provider's next reading calibrates the estimate again.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { compactorFor, type Fixture, fixture, scriptedModel, transcript } from "./_testing.ts";
import { CALIBRATION_KEY, estimateMessages, measure } from "./estimate.ts";
import { GUARD_KEY } from "./guard.ts";
import { toPlanRow } from "./rows.ts";

/** A long transcript whose last request the provider counted at `ratio` × chars/4. */
async function readingAt(fx: Fixture, ratio: number, rounds = 30) {
  await fx.store.appendMessages(fx.sessionId, transcript(rounds, { textChars: 600 }));
  const chars4 = estimateMessages(await fx.store.activeMessages(fx.sessionId));
  await fx.store.appendMessages(fx.sessionId, [
    { role: "assistant", content: "noted", prompt_tokens: Math.round(chars4 * ratio), completion_tokens: 2 },
    { role: "user", content: "go on" },
  ]);
  return chars4;
}

const basis = async (fx: Fixture, ratio: number) =>
  measure((await fx.store.activeMessages(fx.sessionId)).map(toPlanRow), ratio);

for (const ratio of [0.5, 1.5]) {
  Deno.test(`calibration: a provider counting ${ratio} × chars/4 — before and after on that one basis`, async () => {
    await using fx = await fixture(new ManualClock());
    await readingAt(fx, ratio);
    const expectedBefore = await basis(fx, ratio);
    const compactor = compactorFor(fx, { provider: scriptedModel(), config: { prune_tool_results: false } });
    const outcome = await compactor.beforeModelCall(fx.sessionId, {});
    assert.equal(outcome?.changed, true);
    assert.equal(outcome!.before_tokens, expectedBefore, "before: the calibrated estimate of what was there");
    assert.equal(outcome!.after_tokens, await basis(fx, ratio), "after: the same estimator on what is left");
    assert.ok(outcome!.after_tokens < outcome!.before_tokens, "archiving rows never reports growth");
    const [row] = await fx.store.compactionLog(fx.sessionId);
    assert.deepEqual([row!.before_tokens, row!.after_tokens], [
      outcome!.before_tokens,
      outcome!.after_tokens,
    ]);
    assert.deepEqual(await fx.store.getState(fx.sessionId, CALIBRATION_KEY), { ratio });
    // Until the provider reads the new transcript, the estimate before a model call is the pass's own.
    assert.equal((await compactor.occupancy(fx.sessionId)).tokens, outcome!.after_tokens);
  });
}

Deno.test("calibration: the provider's next real prompt_tokens calibrates the estimate again", async () => {
  await using fx = await fixture(new ManualClock());
  await readingAt(fx, 0.5);
  const compactor = compactorFor(fx, { provider: scriptedModel(), config: { prune_tool_results: false } });
  const first = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(first?.changed, true);
  // The next request is read by the provider at 1 000 tokens; a tool result of 400 chars/4 follows.
  await fx.store.appendMessages(fx.sessionId, [
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "n1", name: "shell", arguments: "{}" }],
      prompt_tokens: 1000,
      completion_tokens: 5,
    },
    { role: "tool", tool_call_id: "n1", name: "shell", content: "r".repeat(1600) },
  ]);
  assert.equal((await compactor.occupancy(fx.sessionId)).tokens, 1000 + 5 + 200, "reading + 0.5 × 400");
});

Deno.test("calibration: the tail budget and the verdict are judged on the calibrated basis, not on chars/4", async () => {
  const tails: number[] = [];
  for (const ratio of [0.5, 1.5]) {
    await using fx = await fixture(new ManualClock());
    await fx.store.appendMessages(fx.sessionId, transcript(30, { textChars: 1200 }));
    const chars4 = estimateMessages(await fx.store.activeMessages(fx.sessionId));
    await fx.store.appendMessages(fx.sessionId, [
      {
        role: "assistant",
        content: "noted",
        prompt_tokens: Math.round(chars4 * ratio),
        completion_tokens: 2,
      },
      { role: "user", content: "go on" },
    ]);
    // protect_last's 20 messages are about 2 100 chars/4 tokens: inside a 2 400-token budget at 0.5, not at 1.5.
    const outcome = await compactorFor(fx, {
      provider: scriptedModel(),
      config: { prune_tool_results: false, tail_budget: 0.6 },
    })
      .beforeModelCall(fx.sessionId, {});
    assert.equal(outcome?.changed, true);
    const left = estimateMessages(await fx.store.activeMessages(fx.sessionId)); // chars/4: no reading since
    assert.equal(outcome!.after_tokens, Math.ceil(left * ratio));
    assert.ok(outcome!.after_tokens < 3000, `ratio ${ratio}: under the threshold on the calibrated basis`);
    const guard = await fx.store.getState<{ ineffective: number }>(fx.sessionId, GUARD_KEY);
    assert.equal(guard?.ineffective, 0, `ratio ${ratio}`);
    tails.push(Number((await fx.store.compactionLog(fx.sessionId))[0]!.detail.tail));
  }
  assert.equal(tails[0], 20, "at 0.5 the 20 messages fit the budget");
  assert.ok(tails[1]! < 20, `at 1.5 they do not: a tail of ${tails[1]}`);
});
