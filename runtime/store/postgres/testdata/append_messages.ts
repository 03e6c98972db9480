/**
 * Another writer on the same PostgreSQL store: appends COUNT messages (`TAG 1`, `TAG 2`, …; user and assistant
 * in turn), one statement each, then prints "done".
 * Usage: deno run -A append_messages.ts URL SCHEMA SESSION_ID COUNT [TAG]
 */
import { openPostgresStore } from "../postgres_store.ts";

const [url, schema, sessionId, count, tag = "from B"] = Deno.args as [
  string,
  string,
  string,
  string,
  string?,
];
const store = await openPostgresStore(url, { schema, maxConnections: 1 });
for (let i = 1; i <= Number(count); i++) {
  await store.appendMessages(sessionId, [{ role: i % 2 ? "user" : "assistant", content: `${tag} ${i}` }]);
}
await store.close();
console.log("done");
