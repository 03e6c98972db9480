/**
 * Micro-compaction: between turns, above the micro threshold, the oldest complete assistant
 * exchanges are folded into one rolling summary that replaces the previous one; user messages stay verbatim,
 * in order; same lease, commit, guards and post_compaction as a hard compaction.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { currentProcess } from "../core/process_identity.ts";
import { ProviderError } from "../providers/provider.ts";
import {
  compactorFor,
  type Fixture,
  fixture,
  orphanProblems,
  scriptedModel,
  transcript,
} from "./_testing.ts";
import { estimateMessages } from "./estimate.ts";
import { GUARD_KEY, type GuardState } from "./guard.ts";
import { completeExchanges } from "./plan.ts";
import { foldPays } from "./micro.ts";
import { withTokens } from "./rows.ts";
import { SUMMARY_PREFIX } from "./summary.ts";

const MICRO = { micro: { enabled: true, threshold: 0.5 } }; // 2000 of the fixture's 4000 tokens

const users = async (fx: Fixture) =>
  (await fx.store.activeMessages(fx.sessionId)).filter((m) => m.role === "user").map((
    m,
  ) => [m.id, m.content]);

Deno.test("micro: under its threshold, or when off, nothing runs between turns", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(8));
  const model = scriptedModel();
  assert.equal(
    await compactorFor(fx, { provider: model, config: MICRO, micro_payback_requests: Infinity }).afterTurn(
      fx.sessionId,
      {},
    ),
    null,
  );
  await fx.store.appendMessages(fx.sessionId, transcript(8).slice(2));
  assert.ok(estimateMessages(await fx.store.activeMessages(fx.sessionId)) >= 2000);
  assert.equal(await compactorFor(fx, { provider: model }).afterTurn(fx.sessionId, {}), null, "micro is off");
  assert.equal(model.requests.length, 0);
  assert.deepEqual(await fx.store.compactionLog(fx.sessionId), []);
});

Deno.test("micro: the oldest exchanges fold into one rolling summary; user messages stay, in order", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(14));
  const before = await fx.store.activeMessages(fx.sessionId);
  const usersBefore = await users(fx);
  let round = 0;
  const model = scriptedModel(() => `## Goal\nship\n## Progress\nrolling summary ${++round}`);
  const compactor = compactorFor(fx, { provider: model, config: MICRO, micro_payback_requests: Infinity });
  const outcome = await compactor.afterTurn(fx.sessionId, {});
  assert.deepEqual([outcome?.kind, outcome?.outcome], ["micro_summarize", "committed"]);
  assert.ok(outcome!.after_tokens < 2000, "folded until under the micro threshold");
  assert.equal(model.requests.length, 1);

  const after = await fx.store.activeMessages(fx.sessionId);
  assert.deepEqual(await users(fx), usersBefore, "every user message, verbatim and in order");
  const summaries = after.filter((m) => m.kind === "summary");
  assert.equal(summaries.length, 1);
  assert.equal(summaries[0]!.role, "assistant");
  assert.ok(
    summaries[0]!.content.startsWith(SUMMARY_PREFIX) && summaries[0]!.content.endsWith("rolling summary 1"),
  );
  const archived = (await fx.store.allMessages(fx.sessionId)).filter((m) => !m.active);
  assert.ok(
    archived.length >= 3 && archived.every((m) => m.role !== "user"),
    "only assistant work is folded",
  );
  // The summary stands where the newest folded exchange was: after its user message, before the next one.
  const at = after.indexOf(summaries[0]!);
  assert.deepEqual([after[at - 1]!.role, after[at + 1]!.role], ["user", "user"]);
  const next = before.findIndex((m) => m.id === after[at + 1]!.id);
  assert.deepEqual(
    archived.map((m) => m.id),
    before.slice(4, next).filter((m) => m.role !== "user").map((m) => m.id),
    "the oldest exchanges after the head, up to where the summary stands",
  );
  assert.deepEqual(after.slice(0, 4).map((m) => m.id), before.slice(0, 4).map((m) => m.id), "head verbatim");
  assert.deepEqual(after.slice(-20).map((m) => m.id), before.slice(-20).map((m) => m.id), "tail verbatim");
  assert.deepEqual(orphanProblems(after), []);

  const event = fx.events.find((e) => e.type === "compaction")!;
  assert.ok(event.type === "compaction");
  assert.deepEqual([event.kind, event.reason], ["micro_summarize", "between_turns"]);
  assert.deepEqual(fx.postCompaction, [{
    session_id: fx.sessionId,
    old_session_id: "",
    kind: "micro_summarize",
    reason: "between_turns",
    before_tokens: outcome!.before_tokens,
    after_tokens: outcome!.after_tokens,
    messages_removed: archived.length - 1,
  }]);
  const [row] = await fx.store.compactionLog(fx.sessionId);
  assert.deepEqual([row!.kind, row!.reason, row!.outcome, row!.total_hard], [
    "micro_summarize",
    "between_turns",
    "committed",
    0,
  ]);
  assert.equal(row!.absorbed_messages, archived.length);
  assert.equal(await fx.store.readLease(fx.sessionId), undefined, "the lease is released");

  // The next pass replaces the rolling summary: one, never two; the previous one is updated, not nested.
  await fx.store.appendMessages(fx.sessionId, transcript(6).slice(2));
  const second = await compactor.afterTurn(fx.sessionId, {});
  assert.equal(second?.outcome, "committed");
  assert.match(
    model.requests[1]!.messages[1]!.content,
    /<previous-summary>\n## Goal\nship\n## Progress\nrolling summary 1\n<\/previous-summary>/,
  );
  const now = await fx.store.activeMessages(fx.sessionId);
  assert.deepEqual(
    now.filter((m) => m.kind === "summary").map((m) => m.content.endsWith("rolling summary 2")),
    [true],
  );
  assert.ok(
    (await fx.store.allMessages(fx.sessionId)).some((m) =>
      !m.active && m.content.endsWith("rolling summary 1")
    ),
    "the previous summary is archived",
  );
  assert.equal(fx.postCompaction.length, 2, "post_compaction once per committed pass");
});

Deno.test("micro: a rolling summary that is not smaller is refused, and is no strike against hard compaction", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(14));
  const before = await fx.store.allMessages(fx.sessionId);
  const compactor = compactorFor(fx, {
    provider: scriptedModel(() => "z".repeat(20_000)),
    config: MICRO,
    micro_payback_requests: Infinity,
  });
  const outcome = await compactor.afterTurn(fx.sessionId, {});
  assert.equal(outcome?.outcome, "refused_growth");
  assert.deepEqual(await fx.store.allMessages(fx.sessionId), before);
  assert.equal(fx.postCompaction.length, 0);
  assert.deepEqual(fx.events.map((e) => e.type), ["compaction.start", "compaction.blocked"]);
  assert.equal((await fx.store.getState<GuardState>(fx.sessionId, GUARD_KEY))?.ineffective, 0);
  // Refused again and again, it never opens the breaker that would pause hard summaries.
  await compactor.afterTurn(fx.sessionId, {});
  await compactor.afterTurn(fx.sessionId, {});
  assert.deepEqual(await fx.store.getState<GuardState>(fx.sessionId, GUARD_KEY), {
    ineffective: 0,
    breaker_until: null,
    failures: 0,
    cooldown_until: null,
  });
  assert.deepEqual((await fx.store.compactionLog(fx.sessionId)).map((r) => [r.kind, r.outcome]), [
    ["micro_summarize", "refused_growth"],
    ["micro_summarize", "refused_growth"],
    ["micro_summarize", "refused_growth"],
  ]);
});

Deno.test("micro: a failing summary call arms the cooldown; micro never throws between turns", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(14));
  const model = scriptedModel(() => {
    throw new ProviderError("HTTP 503 overloaded", { status: 503 });
  });
  const compactor = compactorFor(fx, { provider: model, config: MICRO, micro_payback_requests: Infinity });
  assert.equal((await compactor.afterTurn(fx.sessionId, {}))?.outcome, "failed");
  assert.equal((await compactor.afterTurn(fx.sessionId, {}))?.outcome, "cooldown");
  assert.equal(model.requests.length, 1);
  // A store that fails is logged, not thrown: the turn that just completed stays completed.
  const broken = { ...fx.store, estimateInput: () => Promise.reject(new Error("database is locked")) };
  assert.equal(
    await compactorFor({ ...fx, store: broken }, {
      provider: model,
      config: MICRO,
      micro_payback_requests: Infinity,
    }).afterTurn(
      fx.sessionId,
      {},
    ),
    null,
  );
});

Deno.test("micro: a lease held by another process means no fold, logged as nothing to do", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(14));
  await fx.store.acquireLease({
    sessionId: fx.sessionId,
    holder: currentProcess(),
    now: clock.now(),
    ttlMs: 60_000,
  });
  const model = scriptedModel();
  const outcome = await compactorFor(fx, { provider: model, config: MICRO, micro_payback_requests: Infinity })
    .afterTurn(fx.sessionId, {});
  assert.equal(outcome?.outcome, "nothing_to_do");
  assert.equal(model.requests.length, 0);
});

Deno.test("micro: complete exchanges are the runs between user messages, never cut, never open", () => {
  const rows = withTokens([
    {
      id: 1,
      seq: 1,
      pos: 1,
      role: "system",
      kind: "message",
      chars: 10,
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 2,
      seq: 2,
      pos: 2,
      role: "user",
      kind: "message",
      chars: 10,
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 3,
      seq: 3,
      pos: 3,
      role: "assistant",
      kind: "message",
      chars: 10,
      tool_calls: [{ id: "a", name: "t", arguments: "" }],
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 4,
      seq: 4,
      pos: 4,
      role: "tool",
      kind: "message",
      chars: 10,
      tool_call_id: "a",
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 5,
      seq: 5,
      pos: 5,
      role: "assistant",
      kind: "message",
      chars: 10,
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 6,
      seq: 6,
      pos: 6,
      role: "user",
      kind: "message",
      chars: 10,
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 7,
      seq: 7,
      pos: 7,
      role: "assistant",
      kind: "message",
      chars: 10,
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 8,
      seq: 8,
      pos: 8,
      role: "user",
      kind: "message",
      chars: 10,
      prompt_tokens: null,
      completion_tokens: null,
    },
    {
      id: 9,
      seq: 9,
      pos: 9,
      role: "assistant",
      kind: "message",
      chars: 10,
      prompt_tokens: null,
      completion_tokens: null,
    },
  ]);
  const ids = (head: number, tail: number) =>
    completeExchanges(rows, head, tail).map((e) => e.map((r) => r.id));
  assert.deepEqual(ids(2, 9), [[3, 4, 5], [7]], "the last run is still open: not complete");
  assert.deepEqual(ids(2, 4), [], "a run the tail cuts is not complete");
  assert.deepEqual(ids(3, 9), [[7]], "a run that starts inside a tool-call span is not folded");
  assert.deepEqual(ids(4, 9), [[5], [7]], "after the span, a run may start at the answer");
});

Deno.test("micro: a fold runs only when it pays for its summary call and the prompt cache it breaks", async () => {
  await using fx = await fixture(new ManualClock());
  // Small exchanges: folding a few of them saves less over 8 requests than the call and the rewrite cost.
  await fx.store.appendMessages(fx.sessionId, transcript(14));
  const model = scriptedModel();
  const outcome = await compactorFor(fx, { provider: model, config: MICRO }).afterTurn(fx.sessionId, {});
  assert.deepEqual([outcome?.outcome, outcome?.changed], ["nothing_to_do", false]);
  assert.match(outcome?.note ?? "", /would not pay for its summary call/);
  assert.equal(model.requests.length, 0, "no summary call was paid for");
  assert.deepEqual((await fx.store.compactionLog(fx.sessionId)).map((r) => r.detail.why), ["does_not_pay"]);
  // A provider without a prompt cache (a long payback horizon): the same fold pays.
  const paying = compactorFor(fx, { provider: model, config: { micro: { enabled: true, payback: 1000 } } });
  assert.equal((await paying.afterTurn(fx.sessionId, {}))?.outcome, "committed");
  assert.equal(model.requests.length, 1);
});

Deno.test("micro: the payback rule", () => {
  // Removed tokens were cached (worth a tenth each); the call and the re-billed suffix are paid in full.
  assert.equal(foldPays({ removed: 1000, callTokens: 1700, rewritten: 4000, horizon: 8 }), false);
  assert.equal(foldPays({ removed: 6000, callTokens: 7000, rewritten: 4000, horizon: 20 }), true);
  assert.equal(foldPays({ removed: 300, callTokens: 1000, rewritten: 4000, horizon: 1000 }), true);
  assert.equal(foldPays({ removed: 300, callTokens: 1000, rewritten: 4000, horizon: 100 }), false);
});
