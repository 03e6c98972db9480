/**
 * The active-transcript queries run before every model call; with 50 000 stored rows of which 43 are active
 * they must visit the active rows only. SQLite's own plan says which index serves each one.
 */
import assert from "node:assert/strict";
import { sqliteHandle } from "./_testing.ts";
import { ACTIVE_SQL } from "./messages.ts";
import { openSqliteStore } from "./sqlite_store.ts";

const EXPECTED: Record<keyof typeof ACTIVE_SQL, string> = {
  messages: "SEARCH messages USING INDEX messages_active (session_id=?)",
  version: "SEARCH messages USING COVERING INDEX messages_active (session_id=?)",
  rows: "SEARCH messages USING INDEX messages_active (session_id=?)",
  reading: "SEARCH messages USING INDEX messages_readings (session_id=?)",
  compaction: "SEARCH messages USING INDEX messages_compaction_rows (session_id=?)",
  after: "SEARCH messages USING INDEX sqlite_autoindex_messages_1 (session_id=? AND seq>?)",
};

Deno.test("sqlite: each active-transcript query is one index search, no scan and no sort", async () => {
  const store = openSqliteStore(":memory:");
  try {
    const { id } = await store.createSession({ job: "j" });
    for (let batch = 0; batch < 50; batch++) {
      await store.appendMessages(
        id,
        Array.from({ length: 1000 }, (_, i) => ({
          role: i % 2 ? "assistant" as const : "user" as const,
          content: `row ${batch}.${i}`,
          ...(i % 2 ? { prompt_tokens: i } : {}),
        })),
      );
    }
    const handle = sqliteHandle(store);
    handle.stmt("UPDATE messages SET active = 0 WHERE session_id = ? AND seq <= 49957").run(id);
    handle.db.exec("ANALYZE");
    assert.equal((await store.activeMessages(id)).length, 43);
    for (const [name, sql] of Object.entries(ACTIVE_SQL)) {
      const params = Array(sql.split("?").length - 1).fill(id);
      const plan = handle.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => String(r.detail));
      assert.deepEqual(plan, [EXPECTED[name as keyof typeof ACTIVE_SQL]], `${name}: ${sql}`);
    }
  } finally {
    await store.close();
  }
});
