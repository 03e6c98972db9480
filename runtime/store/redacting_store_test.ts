import assert from "node:assert/strict";
import { createRedactor } from "../core/redact.ts";
import { openSqliteStore } from "./sqlite/sqlite_store.ts";
import { redactingStore } from "./redacting_store.ts";

Deno.test("a redacting store view writes no secret value; other text and the plain store are unchanged", async () => {
  const dir = await Deno.makeTempDir();
  const base = openSqliteStore(`${dir}/state.db`);
  try {
    const store = redactingStore(base, createRedactor({ DEPLOY_TOKEN: "sk-live-123456" }));
    await store.createSession({ id: "s1", job: "j", job_path: null, model: "m", config_json: "{}" });
    const [row] = await store.appendMessages("s1", [{
      role: "tool",
      tool_call_id: "c",
      name: "shell",
      content: "t=sk-live-123456 ok",
    }]);
    assert.equal(row!.content, "t=[REDACTED:DEPLOY_TOKEN] ok");
    await store.setPluginState("p", "k", { nested: ["sk-live-123456"] });
    assert.deepEqual(await base.getPluginState("p", "k"), { nested: ["[REDACTED:DEPLOY_TOKEN]"] });
    await base.appendMessages("s1", [{ role: "user", content: "sk-live-123456 raw" }]);
    assert.equal(
      (await store.allMessages("s1")).at(-1)!.content,
      "sk-live-123456 raw",
      "reads are not changed",
    );
    assert.equal(store.files, base.files);
  } finally {
    await base.close();
    await Deno.remove(dir, { recursive: true });
  }
});
