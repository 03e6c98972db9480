import assert from "node:assert/strict";
import type { PlanRow } from "./rows.ts";
import {
  looksLikeSummary,
  planRendering,
  SUMMARY_PREFIX,
  summaryContent,
  summaryRequest,
  summaryRole,
} from "./summary.ts";

function row(id: number, chars: number, extra: Partial<PlanRow> = {}): PlanRow {
  return {
    id,
    seq: id,
    pos: id,
    role: "user",
    kind: "message",
    chars,
    tokens: Math.ceil(chars / 4),
    prompt_tokens: null,
    completion_tokens: null,
    ...extra,
  };
}

Deno.test("summary: the largest per-message cap that fits the window is used", () => {
  const middle = Array.from({ length: 10 }, (_, i) => row(i + 1, 3000));
  assert.equal(planRendering(middle, 100_000).cap, 8000, "everything fits whole");
  const tight = planRendering(middle, 10_000); // budget 24 000 characters
  assert.equal(tight.cap, 2000);
  assert.equal(tight.omitted, 0);
  assert.equal(tight.shown.length, 10);
});

Deno.test("summary: when even the smallest cap is too long, the newest rows are kept and the rest counted", () => {
  const middle = Array.from({ length: 1000 }, (_, i) => row(i + 1, 1000));
  const plan = planRendering(middle, 2000); // budget 4800 characters
  assert.equal(plan.cap, 160);
  assert.ok(plan.omitted > 0 && plan.shown.length > 0);
  assert.equal(plan.omitted + plan.shown.length, 1000);
  assert.equal(plan.shown.at(-1)!.id, 1000, "the newest row is shown");
  const request = summaryRequest({
    plan,
    contents: new Map(plan.shown.map((r) => [r.id, "c".repeat(160)])),
    model: "m",
    contextWindow: 2000,
  });
  const text = request.messages[1]!.content;
  assert.ok(text.includes(`[${plan.omitted} older messages omitted for length]`));
  assert.ok(text.includes("…[840 more characters]"), "a clipped message says how much is missing");
  assert.ok(text.length < 4800 + 500);
});

Deno.test("summary: the previous summary is given whole, without its marker, and tool calls are shown", () => {
  const previous = row(1, 0, { kind: "summary" });
  const call = row(2, 0, {
    role: "assistant",
    tool_calls: [{ id: "c1", name: "shell", arguments: '{"command":"make test"}' }],
  });
  const result = row(3, 2, { role: "tool", name: "shell", tool_call_id: "c1" });
  const plan = planRendering([previous, call, result], 8000);
  const request = summaryRequest({
    plan,
    contents: new Map([[1, summaryContent("## Goal\nold goal", 12)], [2, ""], [3, "ok"]]),
    model: "summary-model",
    contextWindow: 8000,
    focus: "test failures",
  });
  assert.equal(request.model, "summary-model");
  const text = request.messages[1]!.content;
  assert.ok(text.includes("<previous-summary>\n## Goal\nold goal\n</previous-summary>"));
  assert.ok(!text.includes(SUMMARY_PREFIX));
  assert.ok(text.includes('[assistant] \n  -> calls shell({"command":"make test"})'));
  assert.ok(text.includes("[tool result (shell)] ok"));
  assert.ok(text.endsWith("Pay particular attention to: test failures"));
});

Deno.test("summary: its role repeats neither neighbour when it can; assistant otherwise", () => {
  assert.equal(summaryRole("user", "user"), "assistant");
  assert.equal(summaryRole("tool", "user"), "assistant");
  assert.equal(summaryRole("tool", "assistant"), "user");
  assert.equal(summaryRole("assistant", "assistant"), "user");
  assert.equal(summaryRole("system", "assistant"), "user");
  assert.equal(summaryRole("user", undefined), "assistant");
  // Between a user and an assistant message no role avoids a repeat: the request builder joins it.
  assert.equal(summaryRole("user", "assistant"), "assistant");
  assert.equal(summaryRole("assistant", "user"), "assistant");
});

Deno.test("summary: an answer is a summary when it names two of the sections asked for, however formatted", () => {
  assert.equal(looksLikeSummary("## Goal\nship\n## Progress\nhalf done"), true);
  assert.equal(looksLikeSummary("**Goal**: ship. **Next steps**: tag it."), true);
  assert.equal(looksLikeSummary("Goal: triage. Progress: two answers given."), true);
  assert.equal(looksLikeSummary("ok ok ok %%% <|im_end|> lorem ipsum 0x7f3a ??? the the the"), false);
  assert.equal(looksLikeSummary("I cannot help with that."), false);
  assert.equal(looksLikeSummary("Goal reached."), false, "one section is not enough");
});
