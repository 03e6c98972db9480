/** `hermes sessions compactions ID [--json]` through the real CLI, over a session compacted by the CLI. */
import assert from "node:assert/strict";
import { tempStore } from "../../runtime/session_admin/_testing.ts";
import { hermes, isUserError, storedRelease } from "./_testing.ts";

Deno.test("sessions compactions reports passes, outcomes, hard compactions and occupancy, content-free", async () => {
  await using fx = await tempStore();
  const id = await storedRelease(fx, [{ content: "## Goal\nShip it.\n## Progress\nDone." }], {
    text: `secret step {i}: ${"a detailed progress report ".repeat(12)}`,
    model: { context_window: 4000 },
  });
  const empty = await hermes(["sessions", "compactions", id, "--home", fx.dir]);
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(empty.stdout, `session ${id}: no compaction passes yet\n`);

  for (let i = 0; i < 2; i++) {
    const run = await hermes(["sessions", "compact", id, "--home", fx.dir]);
    assert.equal(run.code, 0, run.stderr);
  }
  const json = await hermes(["sessions", "compactions", id, "--json", "--home", fx.dir]);
  assert.equal(json.code, 0, json.stderr);
  assert.doesNotMatch(json.stdout, /secret step|Ship it/, "the report shows nothing of the transcript");
  const report = JSON.parse(json.stdout);
  assert.equal(report.session_id, id);
  assert.equal(report.passes, 2);
  assert.deepEqual(report.outcomes, {
    committed: 1,
    refused_growth: 0,
    cooldown: 0,
    breaker: 0,
    failed: 0,
    nothing_to_do: 1,
  });
  assert.deepEqual(report.committed, { summarize: 1, micro_summarize: 0, prune_tool_results: 0 });
  assert.equal(report.hard_compactions, 1);
  const [first, second] = report.log;
  assert.equal(report.net_tokens_saved, first.before_tokens - first.after_tokens);
  assert.ok(report.net_tokens_saved > 0);
  assert.equal(first.occupancy, first.after_tokens / 3000);
  assert.deepEqual(report.occupancy, {
    last: second.occupancy,
    median: (first.occupancy + second.occupancy) / 2,
    max: Math.max(first.occupancy, second.occupancy),
  });

  const text = await hermes(["sessions", "compactions", id, "--home", fx.dir]);
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split("\n");
  assert.equal(
    lines[0],
    `session ${id}: 2 compaction passes, 1 committed (hard 1, micro 0, prune 0), net ${report.net_tokens_saved} tokens saved`,
  );
  assert.equal(
    lines[1],
    "outcomes: committed 1, refused_growth 0, cooldown 0, breaker 0, failed 0, nothing_to_do 1",
  );
  assert.match(
    lines[2]!,
    /^occupancy \(tokens after a pass ÷ compaction threshold\): last \d+%, median \d+%, max \d+%$/,
  );
  // The summary call's prompt tokens are the session's: the cache line counts them (none were cached).
  assert.equal(report.prompt_cache.cached_share, 0);
  assert.ok(report.prompt_cache.prompt_tokens > 0);
  assert.match(
    lines[3]!,
    new RegExp(`^prompt cache: 0% of ${report.prompt_cache.prompt_tokens} prompt tokens cached`),
  );
  assert.match(lines[5]!, /^#\s+TIME\s+KIND\s+REASON\s+OUTCOME\s+TOKENS\s+OCCUPANCY\s+ABSORBED\s+MS$/);
  assert.match(
    lines[6]!,
    new RegExp(
      `^1\\s+\\S+Z\\s+summarize\\s+manual\\s+committed\\s+${first.before_tokens} → ${first.after_tokens}\\s+\\d+%`,
    ),
  );
  assert.match(lines[7]!, /^2\s+\S+Z\s+summarize\s+manual\s+nothing_to_do\s+\d+\s+\d+%/);

  const missing = await hermes(["sessions", "compactions", "nope", "--home", fx.dir]);
  assert.ok(isUserError(missing), missing.stderr);
  assert.match(missing.stderr, /unknown session id "nope"/);
});
