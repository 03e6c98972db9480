/**
 * The App's operations on a real SQLite store with the scripted provider, called directly (no transport):
 * what each returns, and that refusals are the domain errors of errors.ts, which name no transport.
 */
import assert from "node:assert/strict";
import { systemClock } from "../core/clock.ts";
import { EventBus } from "../core/events.ts";
import { silentLogger } from "../core/log.ts";
import { noHooks } from "../core/hooks.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import {
  App,
  NotFoundError,
  resultOf,
  TurnCancelledError,
  TurnRunningError,
  ValidationError,
} from "./mod.ts";

const SECRET = "s3cret-value-8f2a91";

async function withApp(fn: (app: App, dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-app-" });
  await Deno.writeTextFile(
    `${dir}/replies.yaml`,
    [
      "- { match: slow, content: late answer, delay: 30s }",
      "- { match: hello, content: hello back }",
      "- { content: anything else }",
    ].join("\n") + "\n",
  );
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    "name: app-test\nmodel: { provider: scripted, script: ./replies.yaml }\nprompt: say hello\n",
  );
  const store = openSqliteStore(`${dir}/state.db`);
  const app = new App({
    store,
    events: new EventBus(systemClock),
    clock: systemClock,
    log: silentLogger,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", MY_API_KEY: SECRET },
    host: "test-host",
    config: undefined,
    cwd: dir,
    source: "rpc",
  });
  try {
    await fn(app, dir);
  } finally {
    await app.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("app: open, prompt, get, list, then delete — plain values, the source and secrets handled here", async () => {
  await withApp(async (app) => {
    const session = await app.open({ job: "job.yaml" });
    const outcome = await app.prompt(session.id, `hello, my key is ${SECRET}`);
    assert.equal(outcome.cancelled, false);
    assert.equal(resultOf(outcome).final, "hello back");
    assert.equal(outcome.result.status, "success");
    const view = await app.get(session.id);
    assert.equal(view.live, true);
    assert.equal(view.busy, false);
    assert.ok(view.occupancy !== null);
    const user = view.messages.find((m) => m.role === "user")!;
    assert.ok(!user.content.includes(SECRET), user.content);
    assert.match(user.content, /^hello, my key is \S+/);
    assert.deepEqual((await app.list()).map((s) => [s.id, s.live]), [[session.id, true]]);
    assert.deepEqual(await app.delete([session.id]), [session.id]);
    assert.deepEqual(app.sessions(), []);
    await assert.rejects(app.get(session.id), NotFoundError);
  });
});

Deno.test("app: a running turn refuses delete (TurnRunningError); cancel stops it and resultOf raises TurnCancelledError", async () => {
  await withApp(async (app) => {
    const { id } = await app.open({ job: "job.yaml" });
    const running = app.prompt(id, "slow one");
    while (!app.find(id)?.busy) await new Promise((resolve) => setTimeout(resolve, 5));
    await assert.rejects(app.delete([id]), (error: unknown) => {
      assert.ok(error instanceof TurnRunningError);
      assert.equal(error.session_id, id);
      assert.match(error.message, /Cannot delete session .*: a turn is running \(cancel it first\)/);
      return true;
    });
    assert.deepEqual(await app.cancel(id), { session_id: id, cancelled: 1 });
    const outcome = await running;
    assert.equal(outcome.cancelled, true);
    assert.throws(() => resultOf(outcome), (error: unknown) => {
      assert.ok(error instanceof TurnCancelledError);
      assert.equal(error.result.terminal_reason, "cancelled");
      return true;
    });
    // Idle again: the same delete goes through.
    assert.deepEqual(await app.delete([id]), [id]);
  });
});

Deno.test("app: validate answers problems as data; run resolves a job reference and returns its result", async () => {
  await withApp(async (app, dir) => {
    assert.deepEqual(await app.validate({ path: "job.yaml" }), { valid: true, name: "app-test" });
    const bad = await app.validate({ job: { name: "Bad Name", prompt: "x" } });
    assert.equal(bad.valid, false);
    await assert.rejects(app.open({ job: "missing.yaml" }), ValidationError);
    const result = await app.run({ job: { job: `${dir}/job.yaml` } });
    assert.equal(result.status, "success");
    assert.equal(result.final, "hello back");
    assert.equal(result.exit_code, 0);
    const prompted = await app.run({ job: { job: "job.yaml" }, prompt: "something" });
    assert.equal(prompted.final, "anything else");
  });
});

Deno.test("app: a stored job is held to the policy in force: storedJob and compactStored refuse it beyond, allow it within", async () => {
  await withApp(async (app, dir) => {
    await Deno.writeTextFile(
      `${dir}/limited.yaml`,
      "name: limited\nmodel: { provider: scripted, script: ./replies.yaml }\nprompt: hello\nlimits: { max_turns: 50 }\n",
    );
    const { session_id: id } = await app.run({ job: { job: "limited.yaml" } });
    await Deno.writeTextFile(`${dir}/tight.yaml`, "limits: { max_turns: 10 }\n");
    await Deno.writeTextFile(`${dir}/loose.yaml`, "limits: { max_turns: 100 }\n");
    const { loadUserConfig } = await import("../config/job_file.ts");
    const under = (policy: string) =>
      new App({
        ...app.context,
        config: loadUserConfig(`${dir}/config.yaml`, { policy: `${dir}/${policy}` }),
      });
    const beyond = /session .+: limits\.max_turns: refused by policy .*50 is above the ceiling 10/;
    await assert.rejects(
      under("tight.yaml").storedJob(id),
      (e) => e instanceof ValidationError && beyond.test(e.message),
    );
    await assert.rejects(
      under("tight.yaml").compactStored(id, { hooks: noHooks }),
      (e) => e instanceof ValidationError && beyond.test(e.message),
    );
    assert.equal((await under("loose.yaml").storedJob(id)).spec.limits?.max_turns, 50);
    const compacted = await under("loose.yaml").compactStored(id, { hooks: noHooks });
    assert.equal(compacted.failed, false);
  });
});
