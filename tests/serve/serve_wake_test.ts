/**
 * A server's own worker starts a run submitted over HTTP at once: the App tells the worker of each run it
 * queued (`onSubmitted` → `QueueWorker.wake`), as `hermes serve` wires them. Time is a manual clock, so the
 * worker's poll never comes unless the test moves the clock; a run queued straight in the store (as another
 * process would queue it) still waits for that poll.
 */
import assert from "node:assert/strict";
import { App } from "../../runtime/app/mod.ts";
import { ManualClock } from "../../runtime/core/_testing.ts";
import { EventBus } from "../../runtime/core/events.ts";
import { silentLogger } from "../../runtime/core/log.ts";
import { currentProcess } from "../../runtime/core/process_identity.ts";
import { loadJob } from "../../runtime/config/job_file.ts";
import { queuedRunOf } from "../../runtime/app/queue.ts";
import { createApi } from "../../runtime/http/server.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { QueueWorker } from "../../loops/daemon/queue_worker.ts";
import type { HermesEvent } from "../../runtime/core/events.ts";
import { Wakeups } from "../../runtime/core/wakeups.ts";
import { tempDir, writeFiles } from "../_testing/cli.ts";
import { call, readSse } from "../_testing/serve.ts";

const POLL_MS = 60_000;
/** How long an event stream sleeps between its looks at the store (runtime/http/runs.ts's default). */
const STREAM_POLL_MS = 200;

/** A manual clock that says when the worker has gone to sleep until its next poll. */
class PollWatchClock extends ManualClock {
  #asleep = Promise.withResolvers<void>();
  #next = new Map<number, () => void>();
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms === POLL_MS) this.#asleep.resolve();
    this.#next.get(ms)?.();
    this.#next.delete(ms);
    return super.sleep(ms, signal);
  }
  /** Resolves at the next sleep of `ms` (an event stream's, between its looks at the store). */
  nextSleep(ms: number): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#next.set(ms, resolve);
    return promise;
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
  let gate = Promise.resolve();
  const runEvents = new Wakeups();
  const worker = new QueueWorker({
    store,
    clock,
    log: silentLogger,
    holder: currentProcess("test-host"),
    pollMs: POLL_MS,
    scanMs: 10 * POLL_MS,
    // The runner is the worker's seam: this one records that the run started and ends it.
    runner: async (run, context) => {
      started.push(run.id);
      onStart();
      await gate;
      context.event({ type: "result", status: "success" } as unknown as HermesEvent);
      return { status: "success", session_id: null, result: null, exit_code: 0 };
    },
    ...(options.wired ? { onStored: (runId: string) => runEvents.notify(runId) } : {}),
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
  const api = createApi({
    app,
    clock,
    log: silentLogger,
    version: "test",
    jobsDir: jobs,
    ...(options.wired ? { runEvents } : {}),
  });
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
    /** Runs started from now on wait for `release`. */
    hold(): { release: () => void } {
      const { promise, resolve } = Promise.withResolvers<void>();
      gate = promise;
      return { release: resolve };
    },
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

Deno.test("serve wake: a stream gets the events the server's own worker stored without waiting for its poll", async () => {
  await using fx = await fixture({ wired: true });
  await fx.clock.asleep();
  const held = fx.hold();
  const starting = fx.nextStart();
  const reply = await call(`${fx.url}/v1/runs`, { token: fx.token, body: { job: "ping" } });
  await starting;
  // The stream has looked once and sleeps on the clock, which never moves: only the worker's news wakes it.
  const looked = fx.clock.nextSleep(STREAM_POLL_MS);
  const streaming = readSse(`${fx.url}/v1/runs/${reply.body.id}/events`, { token: fx.token });
  await looked;
  held.release();
  const stream = await within(streaming, "the stream got no result in 20 s");
  assert.equal(stream.status, 200);
  assert.deepEqual(stream.events.map((e) => e.event), ["result"]);
  assert.equal(stream.events[0]!.id, "1");
});

Deno.test("serve wake: without the worker's news, a stream gets the stored events at its next poll", async () => {
  await using fx = await fixture({ wired: false });
  await fx.clock.asleep();
  const held = fx.hold();
  const reply = await call(`${fx.url}/v1/runs`, { token: fx.token, body: { job: "ping" } });
  const starting = fx.nextStart();
  await fx.clock.advance(POLL_MS);
  await starting;
  let ended = false;
  const looked = fx.clock.nextSleep(STREAM_POLL_MS);
  const streaming = readSse(`${fx.url}/v1/runs/${reply.body.id}/events`, { token: fx.token })
    .finally(() => ended = true);
  await looked;
  held.release();
  while ((await fx.store.getRun(reply.body.id))?.status !== "success") {
    await new Promise((r) => setTimeout(r, 10));
  }
  await call(`${fx.url}/v1/runs/${reply.body.id}`, { token: fx.token });
  assert.equal(ended, false, "the result is stored, but the stream has not looked yet");
  await fx.clock.advance(STREAM_POLL_MS);
  const stream = await streaming;
  assert.deepEqual(stream.events.map((e) => e.event), ["result"]);
});

/** `promise`, or a failure after a generous 20 s. */
async function within<T>(promise: Promise<T>, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(new Error(message)), 20_000)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
