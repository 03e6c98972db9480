/**
 * A server's own worker starts a run submitted over HTTP at once: the App tells the worker of each run it
 * queued (`onSubmitted` → `QueueWorker.wake`), as `hermes serve` wires them. Time is a manual clock, so the
 * worker's poll never comes unless the test moves the clock; a run queued straight in the store (as another
 * process would queue it) still waits for that poll.
 */
import assert from "node:assert/strict";
import { App } from "../runtime/app/mod.ts";
import { ManualClock } from "../runtime/core/_testing.ts";
import { EventBus } from "../runtime/core/events.ts";
import { silentLogger } from "../runtime/core/log.ts";
import { currentProcess } from "../runtime/core/process_identity.ts";
import { loadJob } from "../runtime/config/job_file.ts";
import { queuedRunOf } from "../runtime/app/queue.ts";
import { createApi } from "../runtime/http/server.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { QueueWorker } from "../loops/daemon/queue_worker.ts";
import { tempDir, writeFiles } from "./_cli.ts";
import { call } from "./_serve.ts";

const POLL_MS = 60_000;

/** A manual clock that says when the worker has gone to sleep until its next poll. */
class PollWatchClock extends ManualClock {
  #asleep = Promise.withResolvers<void>();
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms === POLL_MS) this.#asleep.resolve();
    return super.sleep(ms, signal);
  }
  /** Resolves once the worker waits for its poll (after the last call of this). */
  asleep(): Promise<void> {
    return this.#asleep.promise;
  }
  rearm(): void {
    this.#asleep = Promise.withResolvers<void>();
  }
}

async function fixture(options: { wired: boolean }) {
  const dir = await tempDir();
  const jobs = await writeFiles(`${dir}/jobs`, {
    "ping.yaml":
      `name: ping\nmodel: { name: m, base_url: "http://127.0.0.1:9", api_key_env: none }\nprompt: hi\n`,
  });
  const store = openSqliteStore(`${dir}/state.db`);
  const clock = new PollWatchClock(Date.now());
  const started: string[] = [];
  let onStart = () => {};
  const worker = new QueueWorker({
    store,
    clock,
    log: silentLogger,
    holder: currentProcess("test-host"),
    pollMs: POLL_MS,
    scanMs: 10 * POLL_MS,
    // The runner is the worker's seam: this one records that the run started and ends it.
    runner: (run) => {
      started.push(run.id);
      onStart();
      return Promise.resolve({ status: "success", session_id: null, result: null, exit_code: 0 });
    },
  });
  const app = new App({
    store,
    events: new EventBus(clock),
    clock,
    log: silentLogger,
    env: {},
    host: "test-host",
    config: undefined,
    cwd: jobs,
    source: "http",
    ...(options.wired ? { onSubmitted: () => worker.wake() } : {}),
  });
  const { token } = await app.createToken({ scopes: ["runs:read", "runs:write"] });
  const api = createApi({ app, clock, log: silentLogger, version: "test", jobsDir: jobs });
  const stop = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: stop.signal, onListen: () => {} },
    api.fetch,
  );
  const working = worker.run(stop.signal);
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    token,
    store,
    clock,
    started,
    job: loadJob(`${jobs}/ping.yaml`, { env: {} }),
    /** Resolves when the worker starts its next run, or rejects after a generous 20 s. */
    nextStart(): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no run started in 20 s")), 20_000);
        onStart = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
    async [Symbol.asyncDispose]() {
      stop.abort();
      await Promise.all([server.finished, working]);
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("serve wake: a run submitted over HTTP starts on the server's worker without waiting for its poll", async () => {
  await using fx = await fixture({ wired: true });
  await fx.clock.asleep();
  const starting = fx.nextStart();
  const reply = await call(`${fx.url}/v1/runs`, { token: fx.token, body: { job: "ping" } });
  assert.equal(reply.status, 202, JSON.stringify(reply.body));
  await starting; // the clock never moved: no poll came
  assert.deepEqual(fx.started, [reply.body.id]);

  // The same key again queues nothing, so nothing new is started.
  const again = await call(`${fx.url}/v1/runs`, { token: fx.token, body: { job: "ping", key: "k" } });
  assert.equal(again.status, 202);
  const repeat = await call(`${fx.url}/v1/runs`, { token: fx.token, body: { job: "ping", key: "k" } });
  assert.equal(repeat.body.deduplicated, true);
  assert.equal(repeat.body.id, again.body.id);
});

Deno.test("serve wake: a run queued straight in the store (as another process queues it) waits for the poll", async () => {
  await using fx = await fixture({ wired: true });
  await fx.clock.asleep();
  fx.clock.rearm();
  const { run } = await fx.store.submitRun(queuedRunOf(fx.job, { now: fx.clock.now() }));
  // Give a wrongly woken worker every chance to claim it: a request through the server and back.
  await call(`${fx.url}/v1/runs/${run.id}`, { token: fx.token });
  assert.equal((await fx.store.getRun(run.id))?.status, "queued");
  assert.deepEqual(fx.started, []);
  const starting = fx.nextStart();
  await fx.clock.advance(POLL_MS);
  await starting;
  assert.deepEqual(fx.started, [run.id]);
});

Deno.test("serve wake: without the App's notifier, a run submitted over HTTP also waits for the poll", async () => {
  await using fx = await fixture({ wired: false });
  await fx.clock.asleep();
  const reply = await call(`${fx.url}/v1/runs`, { token: fx.token, body: { job: "ping" } });
  assert.equal(reply.status, 202);
  await call(`${fx.url}/v1/runs/${reply.body.id}`, { token: fx.token });
  assert.equal((await fx.store.getRun(reply.body.id))?.status, "queued");
  const starting = fx.nextStart();
  await fx.clock.advance(POLL_MS);
  await starting;
  assert.deepEqual(fx.started, [reply.body.id]);
});
