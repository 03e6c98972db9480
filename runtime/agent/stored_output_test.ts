import assert from "node:assert/strict";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { AppendMessage } from "../store/store.ts";
import { StoredOutput, utf8Bytes } from "./stored_output.ts";

/** A real SQLite store in memory, closed when the test's scope ends. */
function memoryStore() {
  const store = openSqliteStore(":memory:");
  return Object.assign(store, { [Symbol.asyncDispose]: () => store.close() });
}

const tool = (content: string): AppendMessage => ({
  role: "tool",
  content,
  tool_call_id: "c",
  name: "shell",
});
const total = (rows: AppendMessage[]) => rows.reduce((sum, row) => sum + utf8Bytes(row.content), 0);

Deno.test("StoredOutput counts what the session stored in earlier runs, then cuts to what is left", async () => {
  await using store = memoryStore();
  const { id } = await store.createSession({ job: "j" });
  await store.appendMessages(id, [tool("x".repeat(600)), { role: "user", content: "u".repeat(5000) }]);
  const run = new StoredOutput({ store, sessionId: id, ceiling: 1000 });
  const fits = [tool("y".repeat(100))];
  assert.equal(await run.fit(fits[0]!, fits), fits, "within what is left: stored as it is");
  const big = tool("z".repeat(5000));
  const [cut, ...rest] = await run.fit(big, [big]);
  assert.equal(rest.length, 0);
  assert.equal(utf8Bytes(cut!.content), 300, "cut to the 300 bytes left");
  assert.match(
    cut!.content,
    /^z+\n\n\[… \d+ characters cut .*max_session_output, 1000 bytes\); the rest was not stored …\]\n\nz+$/,
  );
  const [marker] = await run.fit(tool("w"), [tool("w")]);
  assert.match(marker!.content, /^\n\n\[… 1 characters cut/);
});

Deno.test("StoredOutput: the window's archived copy is dropped past the ceiling; multi-byte text is cut by bytes", async () => {
  await using store = memoryStore();
  const { id } = await store.createSession({ job: "j" });
  const run = new StoredOutput({ store, sessionId: id, ceiling: 2000 });
  const result = tool("é".repeat(3000)); // 6000 bytes
  const windowCut = [{ ...result, active: false }, { ...result, content: "é".repeat(1500) }];
  const stored = await run.fit(result, windowCut);
  assert.equal(stored.length, 1, "one active row: the whole text is not archived");
  assert.notEqual(stored[0]!.active, false);
  assert.ok(total(stored) <= 2000, `${total(stored)} bytes`);
  assert.ok(total(stored) > 1800, `${total(stored)} bytes: what is left is used`);
});

Deno.test("StoredOutput: concurrent calls share one reading of the store and one count", async () => {
  await using store = memoryStore();
  const { id } = await store.createSession({ job: "j" });
  const run = new StoredOutput({ store, sessionId: id, ceiling: 1000 });
  const results = await Promise.all(
    Array.from({ length: 5 }, () => tool("q".repeat(300))).map((r) => run.fit(r, [r])),
  );
  // Three whole (900 bytes); the fourth has 100 bytes left, less than the marker, so both are the marker alone.
  assert.ok(total(results.flat()) <= 900 + 2 * 200, `${total(results.flat())} bytes`);
  assert.equal(results.filter(([row]) => row!.content === "q".repeat(300)).length, 3);
});
