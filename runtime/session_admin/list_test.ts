import assert from "node:assert/strict";
import { addSessions, tempStore } from "./_fixture.ts";
import { getSessionSummary, listSessions } from "./list.ts";

Deno.test("listSessions filters and limits 1 000 sessions, newest first", async (t) => {
  await using fx = await tempStore();
  const all = addSessions(fx, 1000);
  const newestFirst = [...all].reverse();
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

  await t.step("no filter: every unarchived session", () => {
    assert.deepEqual(ids(listSessions(fx.store)), ids(newestFirst.filter((s) => !s.archived)));
  });
  await t.step("--archived: only archived ones", () => {
    const rows = listSessions(fx.store, { archived: true });
    assert.deepEqual(ids(rows), ids(newestFirst.filter((s) => s.archived)));
    assert.equal(rows.length, 100);
    assert.ok(rows.every((r) => r.archived && r.archived_at !== null));
  });
  await t.step("--job and --status", () => {
    assert.deepEqual(
      ids(listSessions(fx.store, { job: "deploy", status: "failed" })),
      ids(newestFirst.filter((s) => !s.archived && s.job === "deploy" && s.status === "failed")),
    );
    assert.deepEqual(listSessions(fx.store, { job: "no-such-job" }), []);
  });
  await t.step("--since: created at or after the instant", () => {
    const since = all[900]!.created_at;
    assert.deepEqual(
      ids(listSessions(fx.store, { since })),
      ids(newestFirst.filter((s) => !s.archived && s.created_at >= since)),
    );
  });
  await t.step("--limit keeps the newest N after filtering", () => {
    assert.deepEqual(
      ids(listSessions(fx.store, { job: "triage", limit: 7 })),
      ids(newestFirst.filter((s) => !s.archived && s.job === "triage").slice(0, 7)),
    );
    assert.equal(listSessions(fx.store, { limit: 1 })[0]!.id, newestFirst.find((s) => !s.archived)!.id);
  });
  await t.step("rows have the documented fields, times in ISO 8601", () => {
    const row = listSessions(fx.store, { limit: 1 })[0]!;
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
    ]);
    const newest = newestFirst.find((s) => !s.archived)!;
    assert.equal(row.created_at, new Date(newest.created_at).toISOString());
    assert.equal(row.archived, false);
  });
});

Deno.test("summaries built by SQLite carry times exactly as Date#toISOString writes them", async () => {
  await using fx = await tempStore();
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
  const ids = times.map((at) => {
    fx.clock.at = at;
    const id = fx.store.createSession({ job: "t" }).id;
    fx.store.stmt("UPDATE sessions SET ended_at = ?, archived_at = ? WHERE id = ?").run(at + 1, at + 2, id);
    return id;
  });
  const listed = new Map(listSessions(fx.store, { archived: true }).map((s) => [s.id, s]));
  ids.forEach((id, i) => {
    const at = times[i]!;
    const summary = listed.get(id)!;
    assert.equal(summary.created_at, new Date(at).toISOString());
    assert.equal(summary.ended_at, new Date(at + 1).toISOString());
    assert.equal(summary.archived_at, new Date(at + 2).toISOString());
    assert.equal(summary.archived, true);
    assert.deepEqual(getSessionSummary(fx.store, id), summary);
  });
  assert.equal(getSessionSummary(fx.store, "missing"), undefined);
});
