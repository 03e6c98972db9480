/**
 * The run queue: submit → first model request on an idle worker (p50/p99, SQLite and PostgreSQL), queue
 * throughput with several worker processes on the scripted model, and what a full queue costs a plain
 * `hermes run` (a store holding thousands of queued runs against an empty one, interleaved).
 *
 *   deno run -A bench/queue_bench.ts [--url postgres://…] [--samples 40] [--runs 300] [--workers 4]
 *     [--only latency|throughput|plain] [--backend sqlite|postgres] [--concurrency 1,4] [--main PATH/main.ts]
 *
 * `--main` runs the workers (and `hermes run`) of another checkout, e.g. the previous main, so that a caller
 * can interleave the two (bench/queue_compare.ts does).
 */
import { parseArgs } from "node:util";
import { loadJob } from "../runtime/config/job_file.ts";
import { queuedRunOf } from "../runtime/app/queue.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { openPostgresStore } from "../runtime/store/postgres/postgres_store.ts";
import { scratchDatabase } from "../runtime/store/postgres/_testing.ts";
import type { Store } from "../runtime/store/store.ts";
import { startOpenAIServer } from "../tests/_testing/openai_server.ts";
import { MAIN as OWN_MAIN, ROOT } from "../tests/_testing/cli.ts";
import { interleave, percentile, ratio, report, spread, timeProcess } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    url: { type: "string" },
    samples: { type: "string", default: "40" },
    runs: { type: "string", default: "300" },
    workers: { type: "string", default: "4" },
    only: { type: "string" },
    backend: { type: "string" },
    main: { type: "string" },
    concurrency: { type: "string", default: "1,4" },
  },
});
const MAIN = values.main ?? OWN_MAIN;
const wanted = (part: string) => values.only === undefined || values.only === part;
const backendWanted = (name: string) => values.backend === undefined || values.backend === name;
const SAMPLES = Number(values.samples);
const RUNS = Number(values.runs);
const WORKERS = Number(values.workers);
const pgUrl = values.url ?? Deno.env.get("HERMES_TEST_POSTGRES_URL");
const ENDED = new Set(["success", "failed", "limit", "interrupted", "cancelled", "crashed"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spawnDaemon(home: string, db: string, concurrency: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      MAIN,
      "--home",
      home,
      "--db",
      db,
      "--log-level",
      "warn",
      "daemon",
      "--concurrency",
      String(concurrency),
    ],
    cwd: ROOT,
    env: { K: "bench" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return child;
}

/**
 * Waits for the runs to end. Only the last one is polled until it ends, then the rest are checked: a bench
 * that listed every run every few milliseconds would compete with the workers for the database.
 */
async function ended(store: Store, ids: readonly string[], pollMs = 20): Promise<void> {
  for (const id of [...ids].reverse()) {
    while (!ENDED.has((await store.getRun(id))?.status ?? "queued")) await sleep(pollMs);
  }
}

/** Submit → the worker's first model request, on one idle worker; samples in ms. */
async function latency(store: Store, db: string, dir: string): Promise<number[]> {
  let arrived: (() => void) | undefined;
  const server = await startOpenAIServer({
    gate: () => {
      arrived?.();
      return Promise.resolve();
    },
    respond: () => ({ content: "ok" }),
  });
  await Deno.writeTextFile(
    `${dir}/http.yaml`,
    `name: latency\nmodel: { name: m, base_url: "${server.url}", api_key_env: K }\nprompt: hi\n`,
  );
  const job = loadJob(`${dir}/http.yaml`, { env: {} });
  const daemon = spawnDaemon(`${dir}/home`, db, 1);
  const samples: number[] = [];
  try {
    // Warm-up runs (the daemon's start-up, module compilation) are not counted.
    for (let i = -3; i < SAMPLES; i++) {
      const reached = new Promise<number>((resolve) => arrived = () => resolve(performance.now()));
      await sleep(37 + Math.random() * 60); // at a random phase of an idle worker's poll
      const t0 = performance.now();
      const { run } = await store.submitRun(queuedRunOf(job, { now: Date.now() }));
      const at = await reached;
      if (i >= 0) samples.push(at - t0);
      await ended(store, [run.id]);
    }
  } finally {
    daemon.kill("SIGTERM");
    await daemon.status;
    await server.close();
  }
  return samples;
}

/** Runs per second claimed and finished by WORKERS daemon processes on the scripted model. */
async function throughput(store: Store, db: string, dir: string, concurrency: number): Promise<number> {
  await Deno.writeTextFile(`${dir}/fast.replies.yaml`, "- content: ok\n");
  await Deno.writeTextFile(
    `${dir}/fast.yaml`,
    "name: fast\nmodel: { provider: scripted, script: ./fast.replies.yaml }\nprompt: hi\n",
  );
  const job = loadJob(`${dir}/fast.yaml`, { env: {} });
  const daemons = Array.from({ length: WORKERS }, (_, i) => spawnDaemon(`${dir}/home-${i}`, db, concurrency));
  try {
    // Let every worker start (one warm-up run each) before the measured batch.
    const warm = [];
    for (let i = 0; i < WORKERS * 2; i++) {
      warm.push((await store.submitRun(queuedRunOf(job, { now: Date.now() }))).run.id);
    }
    await ended(store, warm);
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      ids.push((await store.submitRun(queuedRunOf(job, { now: Date.now() }))).run.id);
    }
    await ended(store, ids, 250);
    const runs = (await store.listRuns({ job: "fast", limit: RUNS + 1000 })).filter((r) =>
      ids.includes(r.id)
    );
    const failed = runs.filter((r) => r.status !== "success").length;
    if (failed) console.log(`  (${failed} runs did not succeed)`);
    const first = Math.min(...runs.map((r) => r.started_at!));
    const last = Math.max(...runs.map((r) => r.finished_at!));
    return RUNS / ((last - first) / 1000);
  } finally {
    for (const d of daemons) d.kill("SIGTERM");
    await Promise.all(daemons.map((d) => d.status));
  }
}

async function backend(name: string, store: Store, db: string) {
  const dir = await Deno.makeTempDir({ prefix: `hermes-queue-bench-${name}-` });
  if (wanted("latency")) {
    const lat = await latency(store, db, dir);
    report(
      `${name}: submit → first model request, idle worker, p50`,
      `${percentile(lat, 50).toFixed(1)} ms`,
      "≤ 50 ms",
    );
    report(`${name}: submit → first model request, idle worker, p99`, `${percentile(lat, 99).toFixed(1)} ms`);
    report(`${name}: (samples: ${lat.length}, min–max)`, spread(lat));
  }
  for (const concurrency of wanted("throughput") ? values.concurrency!.split(",").map(Number) : []) {
    const rate = await throughput(store, db, dir, concurrency);
    report(
      `${name}: throughput, ${WORKERS} daemons × --concurrency ${concurrency}`,
      `${rate.toFixed(1)} runs/s`,
      "≥ 100 runs/s",
    );
  }
  await Deno.remove(dir, { recursive: true });
}

/** A plain `hermes run` against a store whose queue holds 5 000 queued runs, and against an empty one. */
async function plainRunCost(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-queue-bench-run-" });
  await Deno.writeTextFile(`${dir}/r.replies.yaml`, "- content: ok\n");
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    "name: plain\nmodel: { provider: scripted, script: ./r.replies.yaml }\nprompt: hi\n",
  );
  const full = openSqliteStore(`${dir}/full.db`);
  const job = loadJob(`${dir}/job.yaml`, { env: {} });
  for (let i = 0; i < 5_000; i++) await full.submitRun(queuedRunOf(job, { now: Date.now() }));
  await full.close();
  openSqliteStore(`${dir}/empty.db`).close();
  const run = (db: string) => () =>
    timeProcess(["run", "-A", MAIN, "--home", dir, "--db", db, "run", `${dir}/job.yaml`], { cwd: ROOT });
  const samples = await interleave({ empty: run(`${dir}/empty.db`), full: run(`${dir}/full.db`) }, {
    rounds: 15,
    warmup: 2,
  });
  report("hermes run, empty queue (baseline)", spread(samples.empty));
  report("hermes run, 5 000 queued runs in the store", spread(samples.full));
  report("queue's cost on a plain hermes run", ratio(samples.full, samples.empty), "none");
  await Deno.remove(dir, { recursive: true });
}

if (backendWanted("sqlite") && (wanted("latency") || wanted("throughput"))) {
  const sqliteDir = await Deno.makeTempDir({ prefix: "hermes-queue-bench-db-" });
  const sqlite = openSqliteStore(`${sqliteDir}/state.db`);
  await backend("sqlite", sqlite, `${sqliteDir}/state.db`);
  await sqlite.close();
  await Deno.remove(sqliteDir, { recursive: true });
}
if (backendWanted("postgres") && (wanted("latency") || wanted("throughput"))) {
  if (pgUrl) {
    await using database = await scratchDatabase(pgUrl, "hermes_queue_bench");
    const pg = await openPostgresStore(database.url);
    await backend("postgres", pg, database.url);
    await pg.close();
  } else console.log("postgres: skipped (no --url or HERMES_TEST_POSTGRES_URL)");
}
if (wanted("plain")) await plainRunCost();
