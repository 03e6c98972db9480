import assert from "node:assert/strict";
import type { PlanRow } from "./rows.ts";
import { placeholderFor, planPrune, tailBeyondNewest } from "./prune.ts";

function row(id: number, role: PlanRow["role"], chars: number): PlanRow {
  return {
    id,
    seq: id,
    pos: id,
    role,
    kind: "message",
    chars,
    tokens: Math.ceil(chars / 4),
    prompt_tokens: null,
    completion_tokens: null,
    ...(role === "tool" ? { tool_call_id: `c${id}`, name: "read_file" } : {}),
  };
}

Deno.test("prune: the placeholder says how big the result was and how to read it again", () => {
  assert.equal(
    placeholderFor({ chars: 58_000, name: "read_file" }, "s-1"),
    "[tool result pruned by compaction: 58000 characters from read_file; the original is archived: " +
      "hermes sessions show s-1 --all]",
  );
});

Deno.test("prune: tool results a placeholder would at least halve are replaced, each at its position", () => {
  const rows = [row(1, "assistant", 10), row(2, "tool", 4000), row(3, "tool", 100), row(4, "user", 9000)];
  const plan = planPrune(rows, "s");
  assert.deepEqual(plan.archive, [2]);
  assert.deepEqual(plan.insert.map((r) => [r.pos, r.kind, r.tool_call_id]), [[2, "pruned", "c2"]]);
  assert.equal(plan.savedTokens, 1000 - Math.ceil(placeholderFor(rows[1]!, "s").length / 4));
});

Deno.test("prune: in the tail, the newest results that fit the budget stay whole, the newest always", () => {
  const tail = [row(1, "tool", 4000), row(2, "user", 40), row(3, "tool", 4000), row(4, "tool", 4000)];
  const tokens = (r: PlanRow) => r.tokens;
  assert.deepEqual(tailBeyondNewest(tail, 2000, tokens).map((r) => r.id), [1], "two of 1000 fit in 2000");
  assert.deepEqual(tailBeyondNewest(tail, 1500, tokens).map((r) => r.id), [1, 3]);
  assert.deepEqual(tailBeyondNewest(tail, 10, tokens).map((r) => r.id), [1, 3], "the newest is kept anyway");
  // Once one does not fit, older ones go too, even a small one (the newest few are contiguous).
  const mixed = [row(1, "tool", 40), row(2, "tool", 8000), row(3, "tool", 4000)];
  assert.deepEqual(tailBeyondNewest(mixed, 1500, tokens).map((r) => r.id), [1, 2]);
});
