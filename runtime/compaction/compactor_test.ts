import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { currentProcess } from "../core/process_identity.ts";
import { ProviderError } from "../providers/provider.ts";
import type { StoredMessage } from "../core/types.ts";
import {
  compactorFor,
  fixture,
  orphanProblems,
  scriptedModel,
  SHORT_SUMMARY,
  transcript,
} from "./_testing.ts";
import { estimateMessages } from "./estimate.ts";
import { GUARD_KEY, type GuardState } from "./guard.ts";
import { sqliteHandle } from "../store/sqlite/_testing.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { Store } from "../store/store.ts";
import { SUMMARY_PREFIX } from "./summary.ts";

const LIMIT = 3000; // 0.75 × the fixture's 4000-token window

function logRows(fx: { store: Store; sessionId: string }) {
  return fx.store.compactionLog(fx.sessionId);
}

const ids = (messages: StoredMessage[]) => messages.map((m) => m.id);
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("compactor: under the threshold nothing happens and no model is called", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(5));
  const model = scriptedModel();
  const outcome = await compactorFor(fx, { provider: model }).beforeModelCall(fx.sessionId, {});
  assert.equal(outcome, null);
  assert.equal(model.requests.length, 0);
  assert.equal(fx.events.length, 0);
});

Deno.test("compactor: pruning old tool results alone gets down to the low-water mark, so no model call", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(10, { toolChars: 1200 }));
  const before = await fx.store.activeMessages(fx.sessionId);
  assert.ok(estimateMessages(before) >= LIMIT);
  const model = scriptedModel();
  const outcome = await compactorFor(fx, { provider: model }).beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 0);
  assert.equal(outcome?.changed, true);
  assert.equal(outcome?.kind, "prune_tool_results");
  const after = await fx.store.activeMessages(fx.sessionId);
  assert.equal(after.length, before.length, "placeholders stand in for the results, one for one");
  const pruned = after.filter((m) => m.kind === "pruned");
  assert.equal(outcome?.messages_removed, 0, "active messages before − after");
  assert.ok(pruned.length > 0);
  for (const p of pruned) {
    const original = (await fx.store.allMessages(fx.sessionId)).find((m) =>
      !m.active && m.tool_call_id === p.tool_call_id
    )!;
    assert.equal(original.role, "tool");
    assert.match(original.content, /^log \d+ x+$/, "the original result is kept, archived");
    assert.equal(p.pos, original.pos);
    assert.equal(
      p.content,
      `[tool result pruned by compaction: 1200 characters from shell; the original is archived: ` +
        `hermes sessions show ${fx.sessionId} --all]`,
    );
  }
  // The first three messages after the system prompt and the tail (within its budget) are untouched.
  const tail = Number((await logRows(fx))[0]!.detail.tail);
  assert.ok(tail >= 4, `a tail of ${tail}`);
  assert.deepEqual(ids(after.slice(0, 4)), ids(before.slice(0, 4)));
  assert.deepEqual(ids(after.slice(-tail)), ids(before.slice(-tail)));
  assert.deepEqual(orphanProblems(after), []);
  assert.ok(estimateMessages(after) <= LIMIT * 2 / 3, "down to the low-water mark (half the window)");
  assert.equal(fx.events.filter((e) => e.type === "compaction").length, 1);
  assert.equal(fx.postCompaction.length, 1);
  const log = await logRows(fx);
  assert.deepEqual(log.map((r) => [r.kind, r.reason, r.outcome]), [[
    "prune_tool_results",
    "pre_api",
    "committed",
  ]]);
  assert.equal(log[0]!.absorbed_messages, pruned.length);
});

Deno.test("compactor: the middle is summarised when pruning is not enough; head and tail stay verbatim", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.activeMessages(fx.sessionId);
  const model = scriptedModel();
  // A tail budget that holds protect_last's 20 messages: they stay, the budget does not make them give way.
  const compactor = compactorFor(fx, {
    provider: model,
    summary_model: "cheap-model",
    config: { tail_budget: 0.5 },
  });
  const outcome = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 1);
  const request = model.requests[0]!;
  assert.equal(request.model, "cheap-model");
  assert.deepEqual(request.tools, []);
  const prompt = request.messages.map((m) => m.content).join("\n");
  for (
    const section of ["Goal", "Constraints", "Progress", "Decisions", "Files and identifiers", "Next steps"]
  ) {
    assert.ok(prompt.includes(`## ${section}`), section);
  }
  assert.ok(prompt.includes("answer 2 "), "the middle is in the summary request");
  assert.ok(!prompt.includes("follow-up 20"), "the tail is not");

  const after = await fx.store.activeMessages(fx.sessionId);
  assert.deepEqual(ids(after.slice(0, 4)), ids(before.slice(0, 4)), "system prompt + protect_first verbatim");
  assert.equal(after[1]!.content, "FIRST PROMPT: triage the nightly build");
  assert.deepEqual(ids(after.slice(5)), ids(before.slice(-20)), "the last 20 verbatim");
  const summary = after[4]!;
  assert.equal(summary.role, "user");
  assert.equal(summary.kind, "summary");
  assert.ok(summary.content.startsWith(SUMMARY_PREFIX));
  assert.ok(summary.content.endsWith(SHORT_SUMMARY));
  assert.deepEqual(orphanProblems(after), []);

  const log = await logRows(fx);
  assert.equal(log.length, 1);
  const archived = (await fx.store.allMessages(fx.sessionId)).filter((m) => !m.active);
  assert.equal(archived.length, before.length - 24);
  const tagged = sqliteHandle(fx.store).db.prepare(
    "SELECT count(*) AS n FROM messages WHERE active = 0 AND compaction_id = ?",
  )
    .get(log[0]!.id) as { n: number };
  assert.equal(tagged.n, archived.length);

  assert.deepEqual(outcome, {
    changed: true,
    outcome: "committed",
    kind: "summarize",
    before_tokens: log[0]!.before_tokens,
    after_tokens: estimateMessages(after),
    messages_removed: archived.length - 1,
    occupancy: log[0]!.occupancy,
  });
  assert.equal(log[0]!.occupancy, outcome!.after_tokens / LIMIT);
  assert.ok(outcome!.after_tokens < LIMIT && outcome!.after_tokens < outcome!.before_tokens);
  const event = fx.events.find((e) => e.type === "compaction")!;
  assert.equal(event.kind, "summarize");
  assert.equal(event.reason, "pre_api");
  assert.equal(event.before_tokens, outcome!.before_tokens);
  assert.equal(event.after_tokens, outcome!.after_tokens);
  assert.equal(event.messages_removed, archived.length - 1);
  assert.equal(event.occupancy, outcome!.occupancy);
  assert.deepEqual(fx.postCompaction, [{
    session_id: fx.sessionId,
    old_session_id: "",
    kind: "summarize",
    reason: "pre_api",
    before_tokens: outcome!.before_tokens,
    after_tokens: outcome!.after_tokens,
    messages_removed: archived.length - 1,
  }]);
  assert.equal(await fx.store.readLease(fx.sessionId), undefined, "the lease is released");
});

Deno.test("compactor: a later summary updates the previous one instead of nesting it", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  let round = 0;
  const model = scriptedModel(() => `## Goal\nship\n## Progress\nsummary number ${++round}`);
  const compactor = compactorFor(fx, { provider: model });
  assert.equal((await compactor.beforeModelCall(fx.sessionId, {}))?.changed, true);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }).slice(2));
  assert.equal((await compactor.beforeModelCall(fx.sessionId, {}))?.changed, true);
  const second = model.requests[1]!.messages[1]!.content;
  assert.match(
    second,
    /<previous-summary>\n## Goal\nship\n## Progress\nsummary number 1\n<\/previous-summary>/,
  );
  assert.ok(!second.includes(SUMMARY_PREFIX), "the marker is not fed back to the model");
  const summaries = (await fx.store.activeMessages(fx.sessionId)).filter((m) => m.kind === "summary");
  assert.equal(summaries.length, 1);
  assert.ok(summaries[0]!.content.endsWith("summary number 2"));
  assert.equal(
    (await fx.store.allMessages(fx.sessionId)).filter((m) => m.kind === "summary" && !m.active).length,
    1,
  );
  assert.deepEqual(orphanProblems(await fx.store.activeMessages(fx.sessionId)), []);
});

Deno.test("compactor: /compress is forced, summarises even under the threshold, and the focus steers it", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(8));
  const model = scriptedModel();
  const outcome = await compactorFor(fx, { provider: model }).compact(fx.sessionId, {
    focus: "the flaky test",
  });
  assert.equal(outcome.changed, true);
  assert.equal(outcome.kind, "summarize");
  assert.match(model.requests[0]!.messages[1]!.content, /Pay particular attention to: the flaky test/);
  assert.equal(fx.events.find((e) => e.type === "compaction")?.reason, "manual");
  assert.equal(fx.postCompaction[0]?.reason, "manual");
});

/** Appends rounds until the session is over the threshold again (as a run's next turns would). */
async function grow(fx: { store: Store; sessionId: string }) {
  while (estimateMessages(await fx.store.activeMessages(fx.sessionId)) < LIMIT) {
    await fx.store.appendMessages(fx.sessionId, transcript(4, { textChars: 600 }).slice(2));
  }
}

const fallbackOf = async (fx: { store: Store; sessionId: string }) =>
  (await logRows(fx)).filter((r) => r.outcome === "committed").map((r) => r.detail.fallback ?? null);

Deno.test("compactor: a summary that is not smaller is refused, and the fallback drops the middle behind one marker", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.allMessages(fx.sessionId);
  const model = scriptedModel(() => "z".repeat(40_000));
  const outcome = await compactorFor(fx, { provider: model }).beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 1);
  assert.deepEqual([outcome?.changed, outcome?.kind], [true, "summarize"]);
  assert.ok(outcome!.after_tokens < LIMIT, `${outcome!.after_tokens} tokens`);
  const after = await fx.store.activeMessages(fx.sessionId);
  const markers = after.filter((m) => m.kind === "summary");
  assert.equal(markers.length, 1, "one marker");
  const dropped = before.length - after.length + 1;
  assert.match(
    markers[0]!.content,
    new RegExp(`^\\[Hermes compaction marker\\] ${dropped} earlier messages`),
  );
  assert.match(markers[0]!.content, /stay searchable/);
  assert.match(markers[0]!.content, /"follow-up 1"/, "the dropped user requests are quoted");
  assert.ok(!markers[0]!.content.includes("zzzz"), "the refused summary is not used");
  assert.deepEqual(orphanProblems(after), []);
  const all = await fx.store.allMessages(fx.sessionId);
  assert.equal(all.length, before.length + 1, "the dropped rows are archived, not deleted");
  const blocked = fx.events.find((e) => e.type === "compaction.blocked");
  assert.ok(blocked?.type === "compaction.blocked");
  assert.deepEqual([blocked.reason, blocked.kind, blocked.trigger, blocked.until, blocked.fallback], [
    "refused_growth",
    "summarize",
    "pre_api",
    null,
    true,
  ]);
  assert.equal(fx.postCompaction.length, 1);
  assert.deepEqual(await fallbackOf(fx), ["refused_growth"]);
  assert.equal((await fx.store.getState<GuardState>(fx.sessionId, GUARD_KEY))?.ineffective, 1);
});

Deno.test("compactor: two refused summaries pause summary calls — not compaction; /compress still works; one probe later", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  let answer = "z".repeat(40_000);
  const model = scriptedModel(() => answer);
  const compactor = compactorFor(fx, { provider: model });
  await compactor.beforeModelCall(fx.sessionId, {});
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 2);
  await grow(fx);
  const paused = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 2, "the breaker is open: no summary call");
  assert.equal(paused?.changed, true, "the fallback still brings the session under the threshold");
  assert.ok(paused!.after_tokens < LIMIT);
  const blocked = fx.events.filter((e) => e.type === "compaction.blocked").at(-1);
  assert.ok(blocked?.type === "compaction.blocked");
  assert.deepEqual([blocked.reason, blocked.fallback], ["breaker", true]);
  assert.ok(blocked.until !== null);

  await clock.advance(15 * 60_000 - 1);
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 2, "still inside the recovery window");
  await clock.advance(1);
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 3, "one probe after the window");
  await grow(fx);
  await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 3, "the refused probe re-opens the breaker");
  assert.deepEqual(await fallbackOf(fx), [
    "refused_growth",
    "refused_growth",
    "breaker",
    "breaker",
    "refused_growth",
    "breaker",
  ]);

  answer = SHORT_SUMMARY;
  await grow(fx);
  const forced = await compactor.compact(fx.sessionId, {});
  assert.equal(forced.changed, true, "manual compaction bypasses the breaker");
  assert.equal(model.requests.length, 4);
});

Deno.test("compactor: protect_last gives way — when its messages are over the tail budget the tail is shorter", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  // Every message is big, so protect_last's 20 messages alone are over the threshold.
  await fx.store.appendMessages(fx.sessionId, transcript(40, { textChars: 2500 }));
  const model = scriptedModel();
  const compactor = compactorFor(fx, {
    provider: model,
    config: { protect_last: 20, prune_tool_results: false },
  });
  const first = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(first?.changed, true);
  assert.ok(first!.after_tokens < LIMIT, `${first!.after_tokens} tokens`);
  const after = await fx.store.activeMessages(fx.sessionId);
  assert.equal(after.at(-1)!.content, "follow-up 40", "the latest user message stays verbatim");
  assert.ok(Number((await logRows(fx))[0]!.detail.tail) < 20, "fewer than protect_last messages");
  assert.equal((await fx.store.getState<GuardState>(fx.sessionId, GUARD_KEY))?.ineffective, 0);
  assert.deepEqual(orphanProblems(after), []);
});

Deno.test("compactor: a failing summary call is followed by the fallback, and arms the 60 s → 300 s → 900 s cooldown", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.allMessages(fx.sessionId);
  let fail = true;
  const model = scriptedModel(() => {
    if (fail) throw new ProviderError("HTTP 503 overloaded", { status: 503 });
    return SHORT_SUMMARY;
  });
  const compactor = compactorFor(fx, { provider: model });
  const first = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(first?.changed, true);
  assert.ok(first!.after_tokens < LIMIT);
  const blocked = fx.events.find((e) => e.type === "compaction.blocked");
  assert.ok(blocked?.type === "compaction.blocked");
  assert.deepEqual([blocked.reason, blocked.fallback], ["summary_failed", true]);
  const all = await fx.store.allMessages(fx.sessionId);
  assert.deepEqual(
    all.filter((m) => before.some((b) => b.id === m.id)).map((m) => m.content),
    before.map((m) => m.content),
    "every row is still stored",
  );

  // The cooldown is durable: another process (a fresh store and compactor on the same file) sees it.
  const other = openSqliteStore(fx.path, { clock });
  try {
    await clock.advance(59_000);
    await grow(fx);
    const otherModel = scriptedModel();
    const fallback = await compactorFor({ ...fx, store: other }, { provider: otherModel }).beforeModelCall(
      fx.sessionId,
      {},
    );
    assert.equal(fallback?.changed, true);
    assert.equal(otherModel.requests.length, 0, "no summary call while cooling down");
    const cooling = fx.events.filter((e) => e.type === "compaction.blocked").at(-1);
    assert.ok(cooling?.type === "compaction.blocked");
    assert.equal(cooling.reason, "cooldown");
  } finally {
    await other.close();
  }

  const ladder: [number, number][] = [[1_000, 2], [299_999, 2], [1, 3], [899_999, 3], [1, 4], [899_999, 4], [
    1,
    5,
  ]];
  for (const [advance, calls] of ladder) {
    await clock.advance(advance);
    await grow(fx);
    const outcome = await compactor.beforeModelCall(fx.sessionId, {});
    assert.equal(model.requests.length, calls, `after advancing ${advance} ms`);
    assert.ok(outcome!.after_tokens < LIMIT, "every pass brings the session under the threshold");
  }
  assert.equal((await fx.store.getState<GuardState>(fx.sessionId, GUARD_KEY))?.failures, 5);

  // /compress is not gated by the cooldown, and a success clears it.
  fail = false;
  await grow(fx);
  assert.equal((await compactor.compact(fx.sessionId, {})).changed, true);
  assert.deepEqual(
    await fx.store.getState<GuardState>(fx.sessionId, GUARD_KEY),
    { ineffective: 0, breaker_until: null, failures: 0, cooldown_until: null },
  );
});

Deno.test("compactor: a summary call with no progress is abandoned after the idle timeout, then the fallback", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const called = Promise.withResolvers<void>();
  const model = scriptedModel((_, options) =>
    new Promise<string>((_, reject) => {
      called.resolve();
      options.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true });
    })
  );
  const compactor = compactorFor(fx, { provider: model, summary_idle_timeout_ms: 5_000 });
  const pending = compactor.beforeModelCall(fx.sessionId, {});
  await called.promise;
  await clock.advance(4_999);
  await tick();
  await clock.advance(1);
  const outcome = await pending;
  assert.equal(outcome?.changed, true);
  assert.deepEqual(await fallbackOf(fx), ["summary_failed"]);
  assert.equal(await fx.store.readLease(fx.sessionId), undefined);
});

Deno.test("compactor: a summary call that keeps streaming is still stopped at its total ceiling", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  let onDelta: ((text: string) => void) | undefined;
  const called = Promise.withResolvers<void>();
  // A model that ignores its abort signal: the compactor must not wait for it.
  const model = scriptedModel((_, options) => {
    onDelta = options.onDelta;
    called.resolve();
    return new Promise<string>(() => {});
  });
  const compactor = compactorFor(fx, {
    provider: model,
    summary_idle_timeout_ms: 1_000,
    summary_timeout_ms: 10_000,
  });
  const pending = compactor.beforeModelCall(fx.sessionId, {});
  await called.promise;
  let settled = false;
  pending.finally(() => (settled = true));
  for (let t = 0; t < 9_500; t += 500) {
    await clock.advance(500);
    onDelta!("more");
    await tick();
  }
  assert.equal(settled, false, "steady progress keeps the idle timer from firing");
  await clock.advance(500);
  const outcome = await pending;
  assert.equal(outcome?.changed, true);
  assert.deepEqual(await fallbackOf(fx), ["summary_failed"]);
});

Deno.test("compactor: overflow recovery compacts even under the threshold and reports whether it shrank", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(10, { toolChars: 100 }));
  const model = scriptedModel();
  const compactor = compactorFor(fx, { provider: model });
  assert.equal(await compactor.beforeModelCall(fx.sessionId, {}), null);
  assert.deepEqual(await compactor.recoverOverflow(fx.sessionId, {}), { shrank: true });
  assert.equal(fx.events.find((e) => e.type === "compaction")?.reason, "overflow");
  assert.equal(fx.postCompaction[0]?.reason, "overflow");
  assert.deepEqual(orphanProblems(await fx.store.activeMessages(fx.sessionId)), []);
});

Deno.test("compactor: a short session has nothing to compact", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(4));
  const outcome = await compactorFor(fx, { provider: scriptedModel() }).compact(fx.sessionId, {});
  assert.equal(outcome.changed, false);
  assert.match(outcome.note ?? "", /^nothing to compact/);
});

Deno.test("compactor: a lease held by another live process means no compaction and no model call", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.allMessages(fx.sessionId);
  await fx.store.acquireLease({
    sessionId: fx.sessionId,
    holder: currentProcess(),
    now: clock.now(),
    ttlMs: 60_000,
  });
  const model = scriptedModel();
  const compactor = compactorFor(fx, { provider: model });
  const outcome = await compactor.beforeModelCall(fx.sessionId, {});
  assert.match(outcome?.note ?? "", new RegExp(`^another compaction holds the lease \\(pid ${Deno.pid} on `));
  assert.equal((await compactor.compact(fx.sessionId, {})).changed, false);
  assert.equal(model.requests.length, 0);
  assert.deepEqual(await fx.store.allMessages(fx.sessionId), before);
  assert.deepEqual((await logRows(fx)).map((r) => [r.outcome, r.reason, r.detail]), [
    ["nothing_to_do", "pre_api", { why: "lease_held" }],
    ["nothing_to_do", "manual", { why: "lease_held" }],
  ]);
});

Deno.test("compactor: a lease stolen during the summary call means nothing is written", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.allMessages(fx.sessionId);
  const model = scriptedModel(() => {
    sqliteHandle(fx.store).stmt("UPDATE compaction_leases SET holder_nonce = 'thief' WHERE session_id = ?")
      .run(
        fx.sessionId,
      );
    return SHORT_SUMMARY;
  });
  const outcome = await compactorFor(fx, { provider: model }).beforeModelCall(fx.sessionId, {});
  assert.equal(outcome?.changed, false);
  assert.match(outcome?.note ?? "", /^nothing written: the lease was taken over by pid/);
  assert.deepEqual(await fx.store.allMessages(fx.sessionId), before);
  assert.deepEqual((await logRows(fx)).map((r) => [r.outcome, r.detail]), [["failed", {
    why: "commit_refused",
  }]]);
  assert.equal(fx.postCompaction.length, 0);
  assert.equal(fx.events.map((e) => e.type).join(), "compaction.start,compaction.failed");
  assert.equal(
    (await fx.store.readLease(fx.sessionId))?.holder.nonce,
    "thief",
    "the loser does not free the thief's lease",
  );
});

Deno.test("compactor: a lease that expires during the summary call means nothing is written", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.allMessages(fx.sessionId);
  const called = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const model = scriptedModel(async () => {
    called.resolve();
    await release.promise;
    return SHORT_SUMMARY;
  });
  const pending = compactorFor(fx, { provider: model, lease_ttl_ms: 3_000 }).beforeModelCall(
    fx.sessionId,
    {},
  );
  await called.promise;
  // The process stalls past its lease: the refresher finds it expired.
  await clock.advance(3_000);
  const outcome = await pending;
  release.resolve();
  assert.equal(outcome?.changed, false);
  assert.match(outcome?.note ?? "", /lease lost: the lease expired at/);
  assert.deepEqual(await fx.store.allMessages(fx.sessionId), before);
  assert.deepEqual((await logRows(fx)).map((r) => [r.outcome, r.detail]), [["failed", {
    why: "lease_lost",
  }]]);
  assert.equal(
    await fx.store.getState(fx.sessionId, GUARD_KEY),
    undefined,
    "a lost lease is not the model's failure: no cooldown",
  );
});

Deno.test("compactor: cancelling during the summary call rejects, releases the lease, changes nothing", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.allMessages(fx.sessionId);
  const controller = new AbortController();
  const model = scriptedModel((_, options) =>
    new Promise<string>((_, reject) => {
      options.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true });
      controller.abort(new Error("interrupted"));
    })
  );
  await assert.rejects(
    compactorFor(fx, { provider: model }).beforeModelCall(fx.sessionId, { signal: controller.signal }),
    /interrupted/,
  );
  assert.deepEqual(await fx.store.allMessages(fx.sessionId), before);
  assert.equal(await fx.store.readLease(fx.sessionId), undefined);
  assert.equal(
    await fx.store.getState(fx.sessionId, GUARD_KEY),
    undefined,
    "a cancellation is not a model failure",
  );
});

Deno.test("compactor: disabled compaction never runs by itself, /compress still works", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const model = scriptedModel();
  const compactor = compactorFor(fx, { provider: model, config: { enabled: false } });
  assert.equal(await compactor.beforeModelCall(fx.sessionId, {}), null);
  assert.deepEqual(await compactor.recoverOverflow(fx.sessionId, {}), { shrank: false });
  assert.equal(model.requests.length, 0);
  assert.equal((await compactor.compact(fx.sessionId, {})).changed, true);
});

Deno.test("compactor: a throwing post_compaction hook does not undo or fail the compaction", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(20));
  const hooks = { ...fx.hooks, postCompaction: () => Promise.reject(new Error("plugin crashed")) };
  const outcome = await compactorFor(fx, { provider: scriptedModel(), hooks }).beforeModelCall(
    fx.sessionId,
    {},
  );
  assert.equal(outcome?.changed, true);
  assert.equal((await logRows(fx)).length, 1);
});
