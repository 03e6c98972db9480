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
