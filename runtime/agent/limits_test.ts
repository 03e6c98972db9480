import assert from "node:assert/strict";
import { Budget, LimitError } from "./limits.ts";

const usage = (tokens: number) => ({ prompt_tokens: tokens, completion_tokens: 0 });

Deno.test("Budget: each prompt counts from zero; within one prompt the limits hold", () => {
  const budget = new Budget({ max_turns: 1, max_tokens: 100 });
  let end = budget.begin();
  budget.beforeModelCall();
  budget.record(usage(60));
  assert.throws(() => budget.beforeModelCall(), (e) => e instanceof LimitError && e.limit === "max_turns");
  end();
  end = budget.begin();
  budget.beforeModelCall(); // a new prompt: allowed again
  budget.record(usage(60));
  assert.equal(budget.exceeded(), undefined, "60 of 100 tokens in this prompt");
  end();
  assert.equal(budget.calls, 2, "calls count over the session");
});

Deno.test("Budget: one answer past max_tokens is exceeded; work nested in a prompt shares its counters", () => {
  const budget = new Budget({ max_tokens: 100 });
  const end = budget.begin();
  budget.record(usage(120));
  const nested = budget.begin(); // a /status while the prompt runs
  assert.equal(budget.exceeded()?.limit, "max_tokens");
  nested();
  end();
  // Until the next prompt's first model call, the last prompt's counts stay readable (`/status`).
  const next = budget.begin();
  assert.equal(budget.tokens, 120);
  assert.equal(budget.exceeded(), undefined, "a new prompt has used nothing yet");
  budget.beforeModelCall();
  assert.equal(budget.tokens, 0);
  next();
});

Deno.test("Budget: a delegated task's spend counts toward the delegating session's cost cap", () => {
  const parent = new Budget({ max_cost_usd: 1 });
  const endParent = parent.begin();
  parent.beforeModelCall();
  parent.record(usage(10), 0.2);
  const child = new Budget({ max_cost_usd: 1 }, parent);
  const endChild = child.begin();
  child.beforeModelCall();
  child.record(usage(10), 0.5);
  assert.equal(parent.treeUsd, 0.7);
  // The child's own 0.5 leaves room under its cap, the tree's 0.7 does not: the tree's cap decides.
  assert.equal(child.costLimit(0.25, "before"), undefined, "0.95 of 1: allowed");
  const refused = child.costLimit(0.4, "before");
  assert.equal(refused?.limit, "max_cost");
  assert.match(refused!.message, /the delegating run and its tasks had spent \$0\.70/);
  assert.equal(parent.costLimit(0.4, "before")?.limit, "max_cost", "the parent's own next call too");
  assert.equal(parent.costLimit(0.2, "before"), undefined);
  // A grandchild's spend reaches the root; one answer that takes the tree past the cap stops the task.
  const grandchild = new Budget({ max_cost_usd: 1 }, child);
  const endGrandchild = grandchild.begin();
  grandchild.beforeModelCall();
  grandchild.record(usage(10), 0.4);
  assert.equal(child.treeUsd, 0.9);
  assert.equal(parent.treeUsd, 1.1);
  assert.match(grandchild.exceeded()!.message, /delegating run and its tasks spent \$1\.10/);
  assert.equal(parent.exceeded()?.limit, "max_cost");
  endGrandchild();
  endChild();
  endParent();
});
