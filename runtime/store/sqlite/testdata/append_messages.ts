/**
 * Another writer on the same store: appends COUNT messages (`TAG 1`, `TAG 2`, …; user and assistant in turn),
 * one transaction each, then prints "done". Usage: deno run -A append_messages.ts DB SESSION_ID COUNT [TAG]
 */
import { openSqliteStore } from "../sqlite_store.ts";

const [dbPath, sessionId, count, tag = "from B"] = Deno.args as [string, string, string, string?];
const store = openSqliteStore(dbPath);
for (let i = 1; i <= Number(count); i++) {
  await store.appendMessages(sessionId, [{ role: i % 2 ? "user" : "assistant", content: `${tag} ${i}` }]);
}
await store.close();
console.log("done");
