/**
 * A run reads back from the store only what it cannot know: a session it has just created holds nothing but
 * what the run wrote (its system prompt), so the first turn does not read its steps, transcript, counters,
 * loop or heartbeat, or token calibration back; a resumed session is read as before. Each read is a round
 * trip on PostgreSQL, where the run queue's throughput is counted in them. The store here is a real SQLite
 * store whose operations are recorded on their way through.
 */
import assert from "node:assert/strict";
import { systemClock } from "../core/clock.ts";
import { EventBus } from "../core/events.ts";
import { silentLogger } from "../core/log.ts";
import type { Store } from "../store/store.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import { CALIBRATION_KEY } from "../compaction/estimate.ts";
import { HEARTBEAT_KEY, LOOP_KEY } from "../../loops/recurring_keys.ts";
import { App } from "./mod.ts";

/** The store with each operation's name (and its key, for session state) recorded as it is called. */
function recorded(store: Store): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const view = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const name = String(property);
        calls.push(name === "getState" || name === "setState" ? `${name} ${args[1]}` : name);
        return value.apply(target, args);
      };
    },
  });
  return { store: view, calls };
}

async function withRecordedApp(
  fn: (app: App, calls: string[], store: Store) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-run-reads-" });
  await Deno.writeTextFile(
    `${dir}/replies.yaml`,
    "- { match: again, content: second answer }\n- { content: first answer }\n",
  );
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    "name: reads\nsystem: You are terse.\nmodel: { provider: scripted, script: ./replies.yaml }\nprompt: hi\n",
  );
  const real = openSqliteStore(`${dir}/state.db`);
  const { store, calls } = recorded(real);
  const app = new App({
    store,
    events: new EventBus(systemClock),
    clock: systemClock,
    log: silentLogger,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    host: "test-host",
    config: undefined,
    cwd: dir,
    source: "job",
  });
  try {
    await fn(app, calls, real);
  } finally {
    await app.close();
    await real.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const READS_BACK = [
  "sessionSteps",
  "activeMessages",
  `getState ${LOOP_KEY}`,
  `getState ${HEARTBEAT_KEY}`,
  `getState ${CALIBRATION_KEY}`,
];

Deno.test("run: a new session's first turn reads back nothing it wrote; the result still counts from the store", async () => {
  await withRecordedApp(async (app, calls, store) => {
    const result = await app.run({ job: { job: "job.yaml" } });
    assert.equal(result.status, "success", result.error ?? undefined);
    assert.equal(result.final, "first answer");
    for (const read of READS_BACK) {
      assert.ok(!calls.includes(read), `${read} was called: ${calls.join(", ")}`);
    }
    // The transcript's version is asked once, right before the model call; the counters once, at the end.
    assert.equal(calls.filter((c) => c === "transcriptVersion").length, 1, calls.join(", "));
    assert.equal(calls.filter((c) => c === "getSession").length, 1, calls.join(", "));
    // What was not read back is what the store holds: the system prompt went to the model with the prompt,
    // and the result's usage is the session's.
    const stored = (await store.getSession(result.session_id))!;
    assert.equal(result.usage.prompt_tokens, stored.prompt_tokens);
    assert.equal(result.usage.completion_tokens, stored.completion_tokens);
    assert.deepEqual(
      (await store.activeMessages(result.session_id)).map((m) => [m.role, m.content]),
      [["system", "You are terse."], ["user", "hi"], ["assistant", "first answer"]],
    );
  });
});

Deno.test("run: a resumed session is read back (steps, transcript, counters, loop state)", async () => {
  await withRecordedApp(async (app, calls) => {
    const first = await app.run({ job: { job: "job.yaml" } });
    calls.length = 0;
    const resumed = await app.run({ job: { job: "job.yaml" }, resume: first.session_id, prompt: "again" });
    assert.equal(resumed.status, "success", resumed.error ?? undefined);
    assert.equal(resumed.final, "second answer");
    for (const read of ["sessionSteps", "activeMessages", `getState ${LOOP_KEY}`, "getSession"]) {
      assert.ok(calls.includes(read), `${read} was not called: ${calls.join(", ")}`);
    }
  });
});
