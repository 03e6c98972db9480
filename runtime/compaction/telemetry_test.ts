/**
 * Telemetry: every pass, committed or not, writes one content-free log row with its
 * outcome, measures and the session's running totals; `compaction.start` and `compaction.blocked` tell
 * clients what is going on; a log write that fails never fails the pass.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { createLogger } from "../core/log.ts";
import { ProviderError } from "../providers/provider.ts";
import type { Store } from "../store/store.ts";
import { compactorFor, fixture, scriptedModel, SHORT_SUMMARY, transcript } from "./_testing.ts";
import { estimateMessages } from "./estimate.ts";

/** Appends rounds until the session is over the threshold again (as a run's next turns would). */
async function grow(fx: { store: Store; sessionId: string }) {
  while (estimateMessages(await fx.store.activeMessages(fx.sessionId)) < 3000) {
    await fx.store.appendMessages(fx.sessionId, transcript(4, { textChars: 600 }).slice(2));
  }
}

Deno.test("telemetry: every pass is one log row — summarised, fallen back (refused, breaker, failed, cooldown), nothing to do", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  let answer: () => string = () => "z".repeat(40_000);
  const model = scriptedModel(() => answer());
  const compactor = compactorFor(fx, { provider: model });
  await compactor.beforeModelCall(fx.sessionId, {}); // refused: not smaller
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {}); // refused again: the breaker opens
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {}); // breaker
  await clock.advance(15 * 60_000);
  answer = () => {
    throw new ProviderError("HTTP 503 overloaded", { status: 503 });
  };
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {}); // failed: the cooldown arms
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {}); // cooldown
  answer = () => SHORT_SUMMARY;
  await grow(fx);
  await compactor.compact(fx.sessionId, {}); // summarised (manual passes ignore the cooldown)
  await compactor.compact(fx.sessionId, {}); // nothing new since the last summary

  const log = await fx.store.compactionLog(fx.sessionId);
  assert.deepEqual(log.map((r) => [r.outcome, r.reason, r.kind]), [
    ["committed", "pre_api", "summarize"],
    ["committed", "pre_api", "summarize"],
    ["committed", "pre_api", "summarize"],
    ["committed", "pre_api", "summarize"],
    ["committed", "pre_api", "summarize"],
    ["committed", "manual", "summarize"],
    ["nothing_to_do", "manual", "summarize"],
  ]);
  assert.deepEqual(log.map((r) => r.total_passes), [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(log.map((r) => r.total_committed), [1, 2, 3, 4, 5, 6, 6]);
  assert.deepEqual(log.map((r) => r.total_hard), [1, 2, 3, 4, 5, 6, 6]);
  for (const row of log) {
    assert.deepEqual([row.threshold_tokens, row.window_tokens], [3000, 4000]);
    assert.equal(row.occupancy, row.after_tokens / 3000);
    assert.ok(row.duration_ms !== null && row.duration_ms >= 0);
  }
  const committed = log[5]!;
  assert.equal(committed.absorbed_messages, committed.messages_removed + 1, "rows folded into one summary");
  assert.ok(committed.summary_tokens! > 0 && committed.absorbed_tokens! > committed.summary_tokens!);
  // Content-free: codes and numbers only — no transcript text, no error text.
  const stored = JSON.stringify(log);
  for (const text of ["answer", "follow-up", "log 1", "overloaded", "Triage"]) {
    assert.ok(!stored.includes(text), `the log holds no "${text}"`);
  }
  assert.deepEqual(log.map((r) => r.detail.fallback ?? r.detail.why ?? null), [
    "refused_growth",
    "refused_growth",
    "breaker",
    "summary_failed",
    "cooldown",
    null,
    "nothing_new",
  ]);
});

Deno.test("telemetry: a fallback says why and until when; a pass that works says it started", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const model = scriptedModel(() => {
    throw new ProviderError("HTTP 503 overloaded", { status: 503 });
  });
  const lines: string[] = [];
  const log = createLogger({ write: (line) => lines.push(line) });
  const compactor = compactorFor(fx, { provider: model, log });
  await compactor.beforeModelCall(fx.sessionId, {});
  await grow(fx);
  const second = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(second?.changed, true, "the fallback ran while summary calls cool down");
  assert.deepEqual(fx.events.map((e) => e.type), [
    "compaction.start",
    "compaction",
    "compaction.blocked",
    "compaction.start",
    "compaction",
    "compaction.blocked",
  ]);
  const start = fx.events[0]!;
  assert.ok(start.type === "compaction.start");
  assert.deepEqual([start.reason, start.kind], ["pre_api", "summarize"]);
  assert.equal(start.before_tokens, (await fx.store.compactionLog(fx.sessionId))[0]!.before_tokens);
  const failed = fx.events[2]!;
  assert.ok(failed.type === "compaction.blocked");
  assert.deepEqual([failed.reason, failed.fallback, failed.until], ["summary_failed", true, null]);
  const event = fx.events[5]!;
  assert.ok(event.type === "compaction.blocked");
  assert.deepEqual([event.reason, event.kind, event.trigger, event.until, event.fallback], [
    "cooldown",
    "summarize",
    "pre_api",
    new Date(clock.now() + 60_000).toISOString(),
    true,
  ]);
  assert.equal(model.requests.length, 1, "the cooling-down pass called no model");
  const warnings = lines.filter((l) => l.startsWith("hermes warn: [compaction]"));
  assert.equal(warnings.filter((l) => /the fallback dropped \d+ earlier messages/.test(l)).length, 2);
  assert.ok(warnings.some((l) => /summary call failed: HTTP 503 overloaded/.test(l)));
  assert.ok(warnings.some((l) => /summary calls are cooling down until/.test(l)));
  assert.ok(
    warnings.some((l) => /context compacted 2 times, details of earlier work may be lost/.test(l)),
    "the second hard compaction warns that details may be lost",
  );
});

Deno.test("telemetry: a log row that cannot be written is logged; the pass and the turn go on", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(4));
  const lines: string[] = [];
  const store = {
    ...fx.store,
    recordCompactionPass: () => Promise.reject(new Error("disk I/O error")),
  };
  const outcome = await compactorFor({ ...fx, store }, {
    provider: scriptedModel(),
    log: createLogger({ write: (line) => lines.push(line) }),
  }).compact(fx.sessionId, {});
  assert.equal(outcome.outcome, "nothing_to_do");
  assert.ok(lines.some((l) => /could not log a compaction pass: disk I\/O error/.test(l)), lines.join("\n"));
});
