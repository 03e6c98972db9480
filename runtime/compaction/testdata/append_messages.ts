/**
 * Another writer on the same store: appends N user/assistant messages one transaction each, then prints "done".
 * Usage: deno run -A append_messages.ts DB SESSION_ID N
 */
import { Store } from "../../store/store.ts";

const [dbPath, sessionId, count] = Deno.args as [string, string, string];
const store = Store.open(dbPath);
for (let i = 1; i <= Number(count); i++) {
  store.appendMessages(sessionId, [{ role: i % 2 ? "user" : "assistant", content: `from B ${i}` }]);
}
store.close();
console.log("done");
