import assert from "node:assert/strict";
import { systemClock } from "../core/clock.ts";
import { EventBus, type HermesEvent } from "../core/events.ts";
import { createRedactor } from "../core/redact.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { Store } from "../store/store.ts";
import { sessionOutlets } from "./outlets.ts";

Deno.test("outlets: the store view writes no secret value; reads and the raw store are unchanged", async () => {
  const dir = await Deno.makeTempDir();
  const base = openSqliteStore(`${dir}/state.db`);
  try {
    const { store } = sessionOutlets(
      base,
      new EventBus(systemClock),
      createRedactor({ DEPLOY_TOKEN: "sk-live-123456" }),
    );
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

Deno.test("outlets: events, streamed text and results leave redacted; the bus itself passes events as given", () => {
  const bus = new EventBus(systemClock);
  const seen: HermesEvent[] = [];
  bus.subscribe((event) => seen.push(event));
  // No store call is made here: an empty object stands in for one.
  const outlets = sessionOutlets(
    {} as Store,
    bus,
    createRedactor({ API_KEY: "sk-abcdef", DB_PASSWORD: 'pa"ss\\wo\trd-99' }),
  );
  const emitted = outlets.events.emit("s", { type: "command", name: "n", output: "key sk-abcdef" });
  assert.equal(
    (emitted as { output: string }).output,
    "key [REDACTED:API_KEY]",
    "emit returns what listeners saw",
  );
  bus.emit("s", { type: "command", name: "n", output: "raw sk-abcdef" });
  assert.deepEqual(seen.map((e) => (e as { output: string }).output), [
    "key [REDACTED:API_KEY]",
    "raw sk-abcdef",
  ]);
  assert.equal(outlets.delta("so sk-abcdef"), "so [REDACTED:API_KEY]");
  assert.deepEqual(
    outlets.result({ final: `leaked ${JSON.stringify('pa"ss\\wo\trd-99')}`, usage: { n: 1 } }),
    { final: 'leaked "[REDACTED:DB_PASSWORD]"', usage: { n: 1 } },
  );
});
