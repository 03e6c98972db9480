import assert from "node:assert/strict";
import type { CompactionLogRow } from "../store/store.ts";
import { compactionReport, renderReport } from "./report.ts";

const row: CompactionLogRow = {
  id: 1,
  session_id: "s",
  kind: "prune_tool_results",
  reason: "post_tool",
  outcome: "committed",
  before_tokens: 9000,
  after_tokens: 4000,
  messages_removed: 0,
  created_at: 0,
  detail: {},
  threshold_tokens: 6000,
  window_tokens: 8000,
  occupancy: 4000 / 6000,
  duration_ms: 3,
  absorbed_messages: null,
  absorbed_tokens: null,
  summary_tokens: null,
  total_passes: 1,
  total_committed: 1,
  total_hard: 0,
  total_saved_tokens: 5000,
};

Deno.test("compaction report: the prompt cache share of the session's prompt tokens", () => {
  const report = compactionReport("s", [row], { prompt_tokens: 200_000, cached_tokens: 150_000 });
  assert.deepEqual(report.prompt_cache, {
    prompt_tokens: 200_000,
    cached_tokens: 150_000,
    cached_share: 0.75,
  });
  const text = renderReport(report);
  assert.match(
    text,
    /^prompt cache: 75% of 200000 prompt tokens cached \(150000, as the provider reported\)$/m,
  );
  // Before any model call there is no share to show.
  const none = compactionReport("s", []);
  assert.equal(none.prompt_cache.cached_share, null);
  assert.equal(renderReport(none), "session s: no compaction passes yet\n");
});

Deno.test("compaction report: fallbacks are counted apart from the summaries they stood in for", () => {
  const hard = { ...row, kind: "summarize" as const, reason: "pre_api" as const };
  const log: CompactionLogRow[] = [
    { ...hard, detail: { summary_calls: 1 } },
    { ...hard, detail: { fallback: "summary_failed", dropped: 12 } },
    { ...hard, detail: { fallback: "breaker", dropped: 9 } },
    // A refused fallback-less pass and a prune are neither.
    { ...hard, outcome: "refused_growth", detail: { fallback: "refused_growth" } },
    row,
  ];
  const report = compactionReport("s", log);
  assert.equal(report.hard_compactions, 3);
  assert.equal(report.fallbacks, 2);
  assert.match(renderReport(report), /\(hard 3 of which 2 fallbacks, micro 0, prune 1\)/);
  // Without a fallback the line says nothing of them.
  const plain = compactionReport("s", [log[0]!]);
  assert.equal(plain.fallbacks, 0);
  assert.match(renderReport(plain), /\(hard 1, micro 0, prune 0\)/);
});
