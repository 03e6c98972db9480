/** The token-budgeted tail (issue 13, item 1): what a pass does when the protected tail itself is too big. */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import type { AppendMessage } from "../store/store.ts";
import { compactorFor, fixture, orphanProblems, roleProblems, scriptedModel } from "./_testing.ts";
import { estimateMessages } from "./estimate.ts";
import { PRUNED_PREFIX } from "./prune.ts";

const LIMIT = 3000; // 0.75 × the fixture's 4000-token window; the tail budget is 1000 tokens

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
  const outcome = await compactorFor(fx, { provider: model }).beforeModelCall(fx.sessionId, {
    afterTools: true,
  });
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

Deno.test("tail: a summary that leaves the transcript over the threshold also prunes the tail, in one commit", async () => {
  await using fx = await fixture(new ManualClock());
  const messages = oneLongTurn(0, 0);
  for (let i = 1; i <= 12; i++) {
    messages.push(
      { role: "assistant", content: "", tool_calls: [{ id: `c${i}`, name: "read_file", arguments: "{}" }] },
      { role: "tool", tool_call_id: `c${i}`, name: "read_file", content: `read ${i} `.padEnd(2400, "x") },
      { role: "assistant", content: `answer ${i}` },
      { role: "user", content: `step ${i}` },
    );
  }
  await fx.store.appendMessages(fx.sessionId, messages);
  const model = scriptedModel();
  const compactor = compactorFor(fx, { provider: model, config: { protect_last: 16, tail_budget: 0.05 } });
  const outcome = await compactor.beforeModelCall(fx.sessionId, {});
  assert.equal(model.requests.length, 1);
  assert.deepEqual([outcome?.kind, outcome?.outcome], ["summarize", "committed"]);
  assert.ok(outcome!.after_tokens < LIMIT, `${outcome!.after_tokens} tokens`);
  const after = await fx.store.activeMessages(fx.sessionId);
  assert.equal(after.filter((m) => m.kind === "summary").length, 1);
  const tail = after.slice(-16);
  assert.deepEqual(
    tail.filter((m) => m.role === "tool").map((m) => m.kind),
    ["pruned", "pruned", "pruned", "message"],
    "the last 16 messages stay, the newest result whole",
  );
  assert.ok(tail.every((m) => m.role !== "user" || m.kind === "message"), "user messages verbatim");
  assert.equal((await fx.store.compactionLog(fx.sessionId)).length, 1, "one pass, one row");
  assert.deepEqual(roleProblems(after), []);
  assert.deepEqual(orphanProblems(after), []);
});
