/**
 * `hermes serve` on SQLite, warm: POST /v1/runs → the worker's first model request (p50/p99), interleaved with
 * the same run put in the queue straight through the store (the queue's own latency, the baseline), so the
 * difference is what HTTP, the token check and the job's loading add; and N concurrent POST /v1/runs (time
 * to every 202, p99 of one).
 *
 *   deno run -A bench/serve_bench.ts [--samples 40] [--concurrent 100]
 */
import { parseArgs } from "node:util";
import { loadJob } from "../runtime/config/job_file.ts";
import { queuedRunOf } from "../runtime/app/queue.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { startOpenAIServer } from "../tests/_testing/openai_server.ts";
import { hermes } from "../tests/_testing/cli.ts";
import { startServe } from "../tests/_testing/serve.ts";
import { percentile, report, spread } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { samples: { type: "string", default: "40" }, concurrent: { type: "string", default: "100" } },
});
const SAMPLES = Number(values.samples);
const CONCURRENT = Number(values.concurrent);
const ENDED = new Set(["success", "failed", "limit", "interrupted", "cancelled", "crashed"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let arrived: (() => void) | undefined;
const model = await startOpenAIServer({
  gate: () => {
    arrived?.();
    return Promise.resolve();
  },
  respond: () => ({ content: "ok" }),
});
const home = await Deno.makeTempDir({ prefix: "hermes-serve-bench-" });
const jobs = `${home}/jobs`;
await Deno.mkdir(jobs);
await Deno.writeTextFile(
  `${jobs}/ping.yaml`,
  `name: ping\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\nprompt: hi\n`,
);
const token = (await hermes(["tokens", "create", "--scope", "admin"], { home })).stdout.trim();
const server = await startServe(home, ["--jobs", jobs, "--rate-limit", "100000"], {
  cwd: home,
});
const store = await openSqliteStore(`${home}/state.db`);
const job = loadJob(`${jobs}/ping.yaml`, { env: {} });
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

async function post(): Promise<string> {
  const response = await fetch(`${server.url}/v1/runs`, { method: "POST", headers, body: '{"job":"ping"}' });
  const body = await response.json();
  if (response.status !== 202) throw new Error(JSON.stringify(body));
  return body.id;
}

async function ended(id: string): Promise<void> {
  while (!ENDED.has((await store.getRun(id))?.status ?? "queued")) await sleep(10);
}

try {
  const http: number[] = [];
  const direct: number[] = [];
  for (let i = -3; i < SAMPLES; i++) {
    for (const via of ["http", "store"] as const) {
      const reached = new Promise<number>((resolve) => arrived = () => resolve(performance.now()));
      await sleep(37 + Math.random() * 60); // at a random phase of the idle worker's poll
      const t0 = performance.now();
      const id = via === "http"
        ? await post()
        : (await store.submitRun(queuedRunOf(job, { now: Date.now() }))).run.id;
      const at = await reached;
      if (i >= 0) (via === "http" ? http : direct).push(at - t0);
      await ended(id);
    }
  }
  report("POST /v1/runs → first model request, p50 (min–max)", spread(http), "p50 ≤ 20 ms");
  report("POST /v1/runs → first model request, p99", `${percentile(http, 99).toFixed(2)} ms`);
  report("baseline: store submit → first model request, p50 (min–max)", spread(direct));
  report("baseline: store submit → first model request, p99", `${percentile(direct, 99).toFixed(2)} ms`);

  arrived = undefined;
  const each: number[] = [];
  const t0 = performance.now();
  const ids = await Promise.all(Array.from({ length: CONCURRENT }, async () => {
    const start = performance.now();
    const id = await post();
    each.push(performance.now() - start);
    return id;
  }));
  const accepted = performance.now() - t0;
  for (const id of ids) await ended(id);
  const done = performance.now() - t0;
  report(`${CONCURRENT} concurrent POST /v1/runs: all accepted`, `${accepted.toFixed(0)} ms`);
  report(`${CONCURRENT} concurrent POST /v1/runs: one request p50 (min–max)`, spread(each));
  report(`${CONCURRENT} concurrent POST /v1/runs: one request p99`, `${percentile(each, 99).toFixed(2)} ms`);
  report(
    `${CONCURRENT} runs finished by the server's one worker`,
    `${(CONCURRENT / (done / 1000)).toFixed(1)} runs/s`,
  );
} finally {
  await server.stop();
  await store.close();
  await model.close();
  await Deno.remove(home, { recursive: true });
}
