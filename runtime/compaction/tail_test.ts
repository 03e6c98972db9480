/** The token-budgeted tail: what a pass does when the protected tail itself is too big. */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import type { AppendMessage } from "../store/store.ts";
import { compactorFor, fixture, orphanProblems, roleProblems, scriptedModel } from "./_testing.ts";
import { estimateMessages } from "./estimate.ts";
import { PRUNED_PREFIX } from "./prune.ts";
import { CUT_MARKER } from "./cut.ts";
import { RunError } from "../core/errors.ts";

const LIMIT = 3000; // 0.75 × the fixture's 4000-token window

/** system, a prompt, then `reads` × [tool call, `chars`-character result], all in one turn. */
function oneLongTurn(reads: number, chars: number): AppendMessage[] {
  const messages: AppendMessage[] = [
    { role: "system", content: "You triage CI." },
    { role: "user", content: "Read the log until you know." },
  ];
  for (let i = 1; i <= reads; i++) {
    messages.push(
      { role: "assistant", content: "", tool_calls: [{ id: `c${i}`, name: "read_file", arguments: "{}" }] },
      { role: "tool", tool_call_id: `c${i}`, name: "read_file", content: `read ${i} `.padEnd(chars, "x") },
    );
  }
  return messages;
}

Deno.test("tail: when protect_last covers everything, tool results beyond the newest few are pruned", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, oneLongTurn(10, 1600));
  const before = await fx.store.activeMessages(fx.sessionId);
  assert.ok(estimateMessages(before) >= LIMIT);
  const model = scriptedModel();
  const outcome = await compactorFor(fx, { provider: model, config: { tail_budget: 0.25 } }).beforeModelCall(
    fx.sessionId,
    { afterTools: true },
  );
  assert.equal(model.requests.length, 0, "no summary: there is no middle");
  assert.deepEqual([outcome?.kind, outcome?.outcome], ["prune_tool_results", "committed"]);
  assert.equal(fx.events.find((e) => e.type === "compaction")?.reason, "post_tool");
  const after = await fx.store.activeMessages(fx.sessionId);
  const tools = after.filter((m) => m.role === "tool");
  assert.deepEqual(
    tools.map((m) => m.content.startsWith(PRUNED_PREFIX) ? "pruned" : m.content.slice(0, 7)),
    ["read 1 ", "pruned", "pruned", "pruned", "pruned", "pruned", "pruned", "pruned", "read 9 ", "read 10"],
    "the head's result and the newest two (800 of the 1000-token budget) stay whole",
  );
  assert.ok(estimateMessages(after) < LIMIT);
  assert.deepEqual(orphanProblems(after), []);
});

/** system, a first prompt, `turns` short exchanges, then the latest prompt and `rounds` tool rounds after it. */
function longCurrentTurn(turns: number, rounds: number, chars: number, perRound = 1): AppendMessage[] {
  const messages: AppendMessage[] = [
    { role: "system", content: "You triage CI." },
    { role: "user", content: "FIRST: look at the nightly build." },
  ];
  for (let i = 1; i <= turns; i++) {
    messages.push(
      { role: "assistant", content: `answer ${i} `.padEnd(600, "y") },
      { role: "user", content: `step ${i}` },
    );
  }
  messages.at(-1)!.content = "LATEST: read every log until you know.";
  for (let i = 1; i <= rounds; i++) {
    const ids = Array.from({ length: perRound }, (_, k) => `c${i}_${k}`);
    messages.push(
      {
        role: "assistant",
        content: "",
        tool_calls: ids.map((id) => ({ id, name: "read_file", arguments: "{}" })),
      },
      ...ids.map((id) => ({
        role: "tool" as const,
        tool_call_id: id,
        name: "read_file",
        content: `read ${id} `.padEnd(chars - 4, "x") + " END",
      })),
    );
  }
  return messages;
}

Deno.test("tail: the tail yields — the middle is summarised and the current turn's older results are pruned, in one commit", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, longCurrentTurn(8, 8, 1600));
  const model = scriptedModel();
  const outcome = await compactorFor(fx, { provider: model }).beforeModelCall(fx.sessionId, {
    afterTools: true,
  });
  assert.equal(model.requests.length, 1);
  assert.deepEqual([outcome?.kind, outcome?.outcome], ["summarize", "committed"]);
  assert.ok(outcome!.after_tokens < LIMIT, `${outcome!.after_tokens} tokens`);
  const after = await fx.store.activeMessages(fx.sessionId);
  assert.equal(after.filter((m) => m.kind === "summary").length, 1);
  const latest = after.findIndex((m) => m.content === "LATEST: read every log until you know.");
  assert.ok(latest > 0, "the latest user message is verbatim");
  const results = after.slice(latest).filter((m) => m.role === "tool");
  assert.equal(results.length, 8, "one result per call: nothing of the current turn is dropped");
  assert.equal(results.at(-1)!.kind, "message", "the current round's result is whole");
  assert.ok(results.slice(0, -3).every((m) => m.kind === "pruned"), "older results of the turn are pruned");
  assert.equal((await fx.store.compactionLog(fx.sessionId)).length, 1, "one pass, one row");
  assert.deepEqual(roleProblems(after), []);
  assert.deepEqual(orphanProblems(after), []);
});

Deno.test("tail: results of the current round too big for the window are cut to fit, head and end kept", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, longCurrentTurn(2, 1, 6000, 3));
  const before = await fx.store.activeMessages(fx.sessionId);
  assert.ok(estimateMessages(before) > 4000, "over the window");
  const outcome = await compactorFor(fx, { provider: scriptedModel() }).beforeModelCall(fx.sessionId, {
    afterTools: true,
  });
  assert.equal(outcome?.changed, true);
  const after = await fx.store.activeMessages(fx.sessionId);
  assert.ok(estimateMessages(after) <= LIMIT, `${estimateMessages(after)} tokens`);
  const results = after.filter((m) => m.role === "tool");
  assert.equal(results.length, 3);
  for (const [k, r] of results.entries()) {
    assert.ok(r.content.startsWith(`read c1_${k} xxx`), "its head is kept");
    assert.ok(r.content.endsWith("x END"), "and its end");
    assert.match(r.content, new RegExp(CUT_MARKER));
  }
  const archived = (await fx.store.allMessages(fx.sessionId)).filter((m) => !m.active && m.role === "tool");
  assert.deepEqual(archived.map((m) => m.content.length), [6000, 6000, 6000], "the whole texts are archived");
  assert.deepEqual(orphanProblems(after), []);
});

Deno.test("tail: only an irreducible part larger than the window fails, naming the sizes", async () => {
  await using fx = await fixture(new ManualClock());
  const messages = longCurrentTurn(6, 0, 0);
  messages[0]!.content = "rules ".repeat(3000); // an 18 000-character system prompt: 4 500 tokens
  await fx.store.appendMessages(fx.sessionId, messages);
  const compactor = compactorFor(fx, { provider: scriptedModel() });
  await assert.rejects(
    () => compactor.beforeModelCall(fx.sessionId, { overheadTokens: 120 }),
    (error: Error) => {
      assert.ok(error instanceof RunError);
      assert.equal(error.reason, "context_too_large");
      assert.match(
        error.message,
        /^Cannot fit the next request into the model's 4000-token context window: its irreducible part alone is about 4\d{3} tokens \(system prompt 4500, tool definitions 120, latest user message 10, current tool round 0\)/,
      );
      return true;
    },
  );
  // The allowed case: a system prompt that fits leaves a run that goes on.
  await using ok = await fixture(new ManualClock());
  const fits = longCurrentTurn(40, 0, 0);
  fits[0]!.content = "rules ".repeat(1000);
  await ok.store.appendMessages(ok.sessionId, fits);
  const outcome = await compactorFor(ok, { provider: scriptedModel() }).beforeModelCall(ok.sessionId, {
    overheadTokens: 120,
  });
  assert.equal(outcome?.changed, true);
  assert.ok(outcome!.after_tokens + 120 <= 4000);
});
