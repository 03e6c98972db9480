/**
 * Telemetry (issue 13, item 7): every pass, committed or not, writes one content-free log row with its
 * outcome, measures and the session's running totals; `compaction.start` and `compaction.blocked` tell
 * clients what is going on; a log write that fails never fails the pass.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { createLogger } from "../core/log.ts";
import { ProviderError } from "../providers/provider.ts";
import { compactorFor, fixture, scriptedModel, SHORT_SUMMARY, transcript } from "./_testing.ts";

Deno.test("telemetry: every pass is one log row — committed, refused, breaker, failed, cooldown, nothing to do", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  let answer: () => string = () => "z".repeat(40_000);
  const model = scriptedModel(() => answer());
  const compactor = compactorFor(fx, { provider: model });
  await compactor.beforeModelCall(fx.sessionId, {}); // refused: not smaller
  await compactor.beforeModelCall(fx.sessionId, {}); // refused again: the breaker opens
  await compactor.beforeModelCall(fx.sessionId, {}); // breaker
  await clock.advance(15 * 60_000);
  answer = () => {
    throw new ProviderError("HTTP 503 overloaded", { status: 503 });
  };
  await compactor.beforeModelCall(fx.sessionId, {}); // failed: the cooldown arms
  await compactor.beforeModelCall(fx.sessionId, {}); // cooldown
  answer = () => SHORT_SUMMARY;
  await compactor.compact(fx.sessionId, {}); // committed (manual passes ignore the cooldown)
  await compactor.compact(fx.sessionId, {}); // nothing new since the last summary

  const log = await fx.store.compactionLog(fx.sessionId);
  assert.deepEqual(log.map((r) => [r.outcome, r.reason, r.kind]), [
    ["refused_growth", "pre_api", "summarize"],
    ["refused_growth", "pre_api", "summarize"],
    ["breaker", "pre_api", "summarize"],
    ["failed", "pre_api", "summarize"],
    ["cooldown", "pre_api", "summarize"],
    ["committed", "manual", "summarize"],
    ["nothing_to_do", "manual", "summarize"],
  ]);
  assert.deepEqual(log.map((r) => r.total_passes), [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(log.map((r) => r.total_committed), [0, 0, 0, 0, 0, 1, 1]);
  assert.deepEqual(log.map((r) => r.total_hard), [0, 0, 0, 0, 0, 1, 1]);
  const committed = log[5]!;
  assert.equal(log.at(-1)!.total_saved_tokens, committed.before_tokens - committed.after_tokens);
  for (const row of log) {
    assert.deepEqual([row.threshold_tokens, row.window_tokens], [3000, 4000]);
    assert.equal(row.occupancy, row.after_tokens / 3000);
    assert.ok(row.duration_ms !== null && row.duration_ms >= 0);
  }
  assert.equal(committed.absorbed_messages, committed.messages_removed + 1, "rows folded into one summary");
  assert.ok(committed.summary_tokens! > 0 && committed.absorbed_tokens! > committed.summary_tokens!);
  // Content-free: codes and numbers only — no transcript text, no error text.
  const stored = JSON.stringify(log);
  for (const text of ["answer", "follow-up", "log 1", "overloaded", "Triage"]) {
    assert.ok(!stored.includes(text), `the log holds no "${text}"`);
  }
  assert.deepEqual(log.map((r) => r.detail.why ?? null), [
    "not_smaller",
    "not_smaller",
    "breaker",
    "summary_failed",
    "cooldown",
    null,
    "nothing_new",
  ]);
});

Deno.test("telemetry: blocked passes say why and until when; a pass that works says it started", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const model = scriptedModel(() => {
    throw new ProviderError("HTTP 503 overloaded", { status: 503 });
  });
  const compactor = compactorFor(fx, { provider: model });
  await compactor.beforeModelCall(fx.sessionId, {});
  const blocked = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(blocked?.outcome, "cooldown");
  assert.deepEqual(fx.events.map((e) => e.type), [
    "compaction.start",
    "compaction.failed",
    "compaction.blocked",
  ]);
  const start = fx.events[0]!;
  assert.ok(start.type === "compaction.start");
  assert.deepEqual([start.reason, start.kind], ["pre_api", "summarize"]);
  assert.equal(start.before_tokens, (await fx.store.compactionLog(fx.sessionId))[0]!.before_tokens);
  const event = fx.events[2]!;
  assert.ok(event.type === "compaction.blocked");
  assert.deepEqual([event.reason, event.kind, event.trigger, event.until], [
    "cooldown",
    "summarize",
    "pre_api",
    new Date(clock.now() + 60_000).toISOString(),
  ]);
  assert.equal(model.requests.length, 1, "the blocked pass called no model");
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
