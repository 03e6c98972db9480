import assert from "node:assert/strict";
import { dailyBudget, dayStart } from "./daily_budget.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import type { ResolvedJob } from "../../runtime/config/job.ts";

Deno.test("dayStart: midnight in the schedule's time zone, across a daylight-saving change", () => {
  const at = Date.parse("2026-03-29T15:00:00Z"); // Paris switched to summer time at 01:00 UTC that day
  assert.equal(new Date(dayStart(at, "Europe/Paris")).toISOString(), "2026-03-28T23:00:00.000Z");
  assert.equal(new Date(dayStart(at, "UTC")).toISOString(), "2026-03-29T00:00:00.000Z");
  assert.equal(
    new Date(dayStart(Date.parse("2026-12-02T03:00:00Z"), "America/New_York")).toISOString(),
    "2026-12-01T05:00:00.000Z",
  );
});

Deno.test("dailyBudget: the day's spend from the store; what is left becomes the run's cost limit", async () => {
  const store = openSqliteStore(":memory:");
  try {
    const job = {
      spec: { name: "nightly", schedule: { cron: "0 * * * *", timezone: "UTC", max_cost_usd_per_day: 1 } },
    } as unknown as ResolvedJob;
    const s = await store.createSession({ job: "nightly" });
    await store.addUsage(s.id, { turns: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.75 });
    const now = Date.now();
    const left = await dailyBudget(job, store, now);
    assert.ok(left?.run);
    assert.equal(left.left, 0.25);
    assert.equal(left.job.spec.limits?.max_cost_usd, 0.25);
    await store.addUsage(s.id, { turns: 1, prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.25 });
    const spent = await dailyBudget(job, store, now);
    assert.ok(spent && !spent.run);
    assert.match(
      spent.note,
      /not run: the job spent \$1\.00 today, schedule\.max_cost_usd_per_day is \$1\.00/,
    );
    // Tomorrow the budget is whole again.
    const tomorrow = await dailyBudget(job, store, dayStart(now, "UTC") + 86_400_000 + 1);
    assert.ok(tomorrow?.run && tomorrow.left === 1);
    assert.equal(await dailyBudget({ spec: { name: "x" } } as unknown as ResolvedJob, store, now), null);
  } finally {
    await store.close();
  }
});
