import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { fixture, transcript } from "./_testing.ts";
import { MARKER_PREFIX, markerContent } from "./fallback.ts";
import { loadPlanRows } from "./rows.ts";
import { summaryContent } from "./summary.ts";

Deno.test("fallback marker: counts what was dropped, says it is searchable, quotes the user requests", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, transcript(6));
  const rows = await loadPlanRows(fx.store, fx.sessionId);
  const dropped = rows.slice(2, 20);
  const marker = await markerContent(fx.store, {
    sessionId: fx.sessionId,
    dropped,
    why: "summary_failed",
    budgetChars: 2000,
  });
  assert.ok(marker.startsWith(`${MARKER_PREFIX} 18 earlier messages of this session were dropped`));
  assert.match(marker, /the summary call failed/);
  assert.match(marker, new RegExp(`hermes sessions show ${fx.sessionId} --all`));
  assert.match(marker, /stay searchable/);
  for (const n of [1, 2, 3, 4]) assert.ok(marker.includes(`"follow-up ${n}"`), `follow-up ${n} quoted`);
  assert.ok(!marker.includes("log 1 xxx"), "tool output is not copied");
  assert.ok(marker.length <= 2000);
});

Deno.test("fallback marker: a tight budget keeps the newest requests and counts the others; a previous summary is carried", async () => {
  await using fx = await fixture(new ManualClock());
  await fx.store.appendMessages(fx.sessionId, [
    ...transcript(0),
    { role: "assistant", content: summaryContent("## Goal\nShip 1.2", 9), kind: "summary" },
    ...transcript(30).slice(2),
  ]);
  const rows = await loadPlanRows(fx.store, fx.sessionId);
  const marker = await markerContent(fx.store, {
    sessionId: fx.sessionId,
    dropped: rows.slice(2, -1),
    why: "breaker",
    budgetChars: 800,
  });
  assert.ok(marker.length <= 800, `${marker.length} characters`);
  assert.match(marker, /"follow-up 29"/, "the newest dropped request is quoted");
  assert.ok(!marker.includes('"follow-up 1"'), "the oldest are counted, not quoted");
  assert.match(marker, /\(\d+ older ones not quoted\)/);
  assert.match(marker, /## Goal\nShip 1\.2/, "what the previous summary said is kept");

  // A marker replacing a marker keeps the running count.
  await fx.store.appendMessages(fx.sessionId, [{ role: "assistant", content: marker, kind: "summary" }]);
  const again = await loadPlanRows(fx.store, fx.sessionId);
  const next = await markerContent(fx.store, {
    sessionId: fx.sessionId,
    dropped: again.slice(-2),
    why: "infeasible",
    budgetChars: 800,
  });
  const count = Number(marker.match(/\] (\d+) earlier/)![1]);
  assert.ok(next.startsWith(`${MARKER_PREFIX} ${count + 1} earlier messages`));
});
