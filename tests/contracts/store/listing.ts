/** Contract: the session listing of `hermes sessions list`, newest first, filtered, as summaries. */
import assert from "node:assert/strict";
import type { SessionStatus } from "../../../runtime/core/types.ts";
import type { Store } from "../../../runtime/store/store.ts";
import { type OpenStore, SetClock } from "./_testing.ts";

const JOBS = ["nightly", "triage", "deploy", "report"];
const STATUSES: SessionStatus[] = ["success", "failed", "limit", "success", "interrupted"];

/** `count` sessions a minute apart; session i has job JOBS[i % 4], status STATUSES[i % 5], archived if i % 10 = 9. */
async function addSessions(store: Store, clock: SetClock, count: number) {
  const start = clock.at;
  const sessions = [];
  for (let i = 0; i < count; i++) {
    clock.at = start + i * 60_000;
    const job = JOBS[i % JOBS.length]!;
    const status = STATUSES[i % STATUSES.length]!;
    const { id } = await store.createSession({ job, status });
    await store.appendMessages(id, [{ role: "user", content: `Check build number ${i}` }]);
    const archived = i % 10 === 9;
    if (archived) await store.archiveSessions([id]);
    sessions.push({ id, job, status, created_at: clock.at, archived });
  }
  return sessions;
}

export function listingContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: listSessions filters and limits 1 000 sessions, newest first`, async (t) => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const { store } = fx;
    const all = await addSessions(store, clock, 1000);
    const newestFirst = [...all].reverse();
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

    await t.step("no filter: every unarchived session", async () => {
      assert.deepEqual(ids(await store.listSessions()), ids(newestFirst.filter((s) => !s.archived)));
    });
    await t.step("archived: only archived ones", async () => {
      const rows = await store.listSessions({ archived: true });
      assert.deepEqual(ids(rows), ids(newestFirst.filter((s) => s.archived)));
      assert.equal(rows.length, 100);
      assert.ok(rows.every((r) => r.archived && r.archived_at !== null));
    });
    await t.step("job and status", async () => {
      assert.deepEqual(
        ids(await store.listSessions({ job: "deploy", status: "failed" })),
        ids(newestFirst.filter((s) => !s.archived && s.job === "deploy" && s.status === "failed")),
      );
      assert.deepEqual(await store.listSessions({ job: "no-such-job" }), []);
    });
    await t.step("since: created at or after the instant", async () => {
      const since = all[900]!.created_at;
      assert.deepEqual(
        ids(await store.listSessions({ since })),
        ids(newestFirst.filter((s) => !s.archived && s.created_at >= since)),
      );
    });
    await t.step("limit keeps the newest N after filtering", async () => {
      assert.deepEqual(
        ids(await store.listSessions({ job: "triage", limit: 7 })),
        ids(newestFirst.filter((s) => !s.archived && s.job === "triage").slice(0, 7)),
      );
      assert.equal((await store.listSessions({ limit: 1 }))[0]!.id, newestFirst.find((s) => !s.archived)!.id);
    });
    await t.step("listSessionsJson is the same list as JSON text", async () => {
      const options = { job: "report", limit: 20 };
      assert.deepEqual(
        (await store.listSessionsJson(options)).map((json) => JSON.parse(json)),
        await store.listSessions(options),
      );
    });
    await t.step("rows have the documented fields, times in ISO 8601", async () => {
      const row = (await store.listSessions({ limit: 1 }))[0]!;
      assert.deepEqual(Object.keys(row), [
        "id",
        "job",
        "status",
        "terminal_reason",
        "model",
        "parent_id",
        "created_at",
        "updated_at",
        "ended_at",
        "archived",
        "archived_at",
        "turns",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "cost_usd",
        "labels",
      ]);
      const newest = newestFirst.find((s) => !s.archived)!;
      assert.equal(row.created_at, new Date(newest.created_at).toISOString());
      assert.equal(row.archived, false);
    });
  });

  Deno.test(`${name}: summaries carry times exactly as Date#toISOString writes them`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const { store } = fx;
    const times = [
      0,
      1,
      999,
      Date.UTC(2026, 10, 29, 8, 39, 31, 37),
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(1999, 11, 31, 23, 59, 59, 1),
      Date.UTC(2100, 2, 1, 0, 0, 0, 500),
    ];
    let seed = 11;
    for (let i = 0; i < 500; i++) {
      seed = (seed * 48_271) % 2_147_483_647;
      times.push(Date.UTC(2020, 0, 1) + seed * 97);
    }
    const ids = [];
    for (const at of times) {
      clock.at = at;
      const { id } = await store.createSession({ job: "t", model: "m" });
      await store.updateSession(id, { ended_at: at + 1, turns: 2, prompt_tokens: 30, completion_tokens: 4 });
      clock.at = at + 2;
      await store.archiveSessions([id]);
      ids.push(id);
    }
    const listed = new Map((await store.listSessions({ archived: true })).map((s) => [s.id, s]));
    for (const [i, id] of ids.entries()) {
      const at = times[i]!;
      const summary = listed.get(id)!;
      assert.equal(summary.created_at, new Date(at).toISOString());
      assert.equal(summary.updated_at, new Date(at).toISOString());
      assert.equal(summary.ended_at, new Date(at + 1).toISOString());
      assert.equal(summary.archived_at, new Date(at + 2).toISOString());
      assert.equal(summary.archived, true);
      assert.deepEqual(await store.getSessionSummary(id), summary);
    }
    assert.deepEqual(listed.get(ids[0]!), {
      id: ids[0],
      job: "t",
      status: "running",
      terminal_reason: null,
      model: "m",
      parent_id: null,
      created_at: new Date(0).toISOString(),
      updated_at: new Date(0).toISOString(),
      ended_at: new Date(1).toISOString(),
      archived: true,
      archived_at: new Date(2).toISOString(),
      turns: 2,
      prompt_tokens: 30,
      completion_tokens: 4,
      cached_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: 0,
      labels: {},
    });
    assert.equal(await store.getSessionSummary("missing"), undefined);
  });
}
