/**
 * A racer for the lease test: opens the store, prints "ready", waits for "go" on stdin, tries to take the
 * session's compaction lease once, prints {"acquired": boolean}, and stays alive (holding it) until stdin closes.
 * Usage: deno run -A acquire_lease.ts DB SESSION_ID
 */
import { currentProcess } from "../../core/process_identity.ts";
import { openSqliteStore } from "../../store/sqlite/sqlite_store.ts";

const [dbPath, sessionId] = Deno.args as [string, string];
const store = openSqliteStore(dbPath);
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
console.log("ready");
let input = "";
while (!input.includes("go\n")) {
  const { value, done } = await lines.read();
  if (done) Deno.exit(1);
  input += value;
}
const result = await store.acquireLease({
  sessionId,
  holder: currentProcess(),
  now: Date.now(),
  ttlMs: 60_000,
});
console.log(JSON.stringify({ acquired: result.acquired }));
while (!(await lines.read()).done) { /* hold the lease until the test closes stdin */ }
await store.close();
