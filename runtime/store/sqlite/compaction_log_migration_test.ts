/** Migration 4 (compaction telemetry): a store written before it keeps its log, with running totals filled in. */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { migrations } from "../_migrations.ts";
import { openSqliteStore } from "./sqlite_store.ts";

Deno.test("sqlite: migrating a version-3 store gives its compaction log outcomes and running totals", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-migrate-" });
  try {
    const path = `${dir}/state.db`;
    const old = new DatabaseSync(path);
    for (const sql of migrations.slice(0, 3)) old.exec(sql);
    old.exec("PRAGMA user_version = 3");
    old.exec(`INSERT INTO sessions (id, job, status, created_at, updated_at) VALUES ('s1', 'j', 'done', 0, 0),
      ('s2', 'j', 'done', 0, 0)`);
    const log = old.prepare(
      `INSERT INTO compaction_log (session_id, kind, reason, before_tokens, after_tokens, messages_removed,
        created_at) VALUES (?, ?, 'threshold', ?, ?, 3, 0)`,
    );
    log.run("s1", "prune_tool_results", 1000, 900);
    log.run("s1", "summarize", 900, 400);
    log.run("s2", "summarize", 500, 100);
    old.close();

    const store = openSqliteStore(path);
    try {
      const rows = (await store.compactionLog("s1")).map((r) => [
        r.kind,
        r.outcome,
        r.total_passes,
        r.total_committed,
        r.total_hard,
        r.total_saved_tokens,
        r.occupancy,
      ]);
      assert.deepEqual(rows, [
        ["prune_tool_results", "committed", 1, 1, 0, 100, null],
        ["summarize", "committed", 2, 2, 1, 600, null],
      ]);
      assert.deepEqual((await store.compactionLog("s2")).map((r) => r.total_saved_tokens), [400]);
      const next = await store.recordCompactionPass({
        sessionId: "s1",
        now: 1,
        kind: "summarize",
        reason: "pre_api",
        outcome: "breaker",
        tokens: 400,
      });
      assert.deepEqual([next.total_passes, next.total_committed, next.total_saved_tokens], [3, 2, 600]);
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
