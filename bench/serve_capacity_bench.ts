/**
 * What a warm `hermes serve` (SQLite, scripted model) holds:
 *
 * - **Idle sessions**: N sessions made by runs over the API (`POST /v1/runs`), then each opened in a fresh server
 *   (restarted on the same store, warmed) by one `POST /v1/sessions/{id}/prompt` and left idle (`hermes_sessions_open` in /metrics says how many are
 *   held). The server's RSS (/proc) is read before the first is opened and after every step of N/steps; the
 *   cost of one idle session is each step's RSS growth over its sessions (median, min–max over the steps),
 *   and the whole growth over N.
 * - **SSE fan-out**: C clients stream one run's events (`GET /v1/runs/{id}/events`) while its model call is
 *   held; the call is let go and the time from the result event being stored (seen by this bench's own
 *   connection to the store, looking every 2 ms) to the last client receiving it is measured, per round
 *   (median, min–max over rounds), with the server's RSS added by the C open streams.
 *
 *   deno run -A bench/serve_capacity_bench.ts [--sessions 1000] [--steps 5] [--clients 100] [--rounds 5]
 */
import { parseArgs } from "node:util";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { startOpenAIServer } from "../tests/_testing/openai_server.ts";
import { hermes } from "../tests/_testing/cli.ts";
import { startServe } from "../tests/_testing/serve.ts";
import { median, report, spread } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    sessions: { type: "string", default: "1000" },
    steps: { type: "string", default: "5" },
    clients: { type: "string", default: "100" },
    rounds: { type: "string", default: "5" },
  },
});
const SESSIONS = Number(values.sessions);
const STEPS = Number(values.steps);
const CLIENTS = Number(values.clients);
const ROUNDS = Number(values.rounds);
const ENDED = new Set(["success", "failed", "limit", "interrupted", "cancelled", "crashed"]);
const MIB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (bytes: number) => `${(bytes / MIB).toFixed(2)} MiB`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

let hold: Promise<void> | undefined;
let held: (() => void) | undefined;
const model = await startOpenAIServer({
  gate: () => {
    held?.();
    return hold ?? Promise.resolve();
  },
  respond: () => ({ content: "ok" }),
});
const home = await Deno.makeTempDir({ prefix: "hermes-serve-capacity-" });
const jobs = `${home}/jobs`;
await Deno.mkdir(jobs);
await Deno.writeTextFile(
  `${jobs}/ping.yaml`,
  `name: ping\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\nprompt: hi\n`,
);
const token = (await hermes(["tokens", "create", "--scope", "admin"], { home })).stdout.trim();
const serve = () =>
  startServe(
    home,
    ["--jobs", jobs, "--rate-limit", "1000000", "--max-streams", String(CLIENTS + 10), "--concurrency", "4"],
    { cwd: home },
  );
let server = await serve();
const store = openSqliteStore(`${home}/state.db`);
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

/** The server's resident set now (VmRSS), bytes. */
async function rss(): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${server.child.pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** RSS once it has settled: the median of five readings 200 ms apart. */
async function settledRss(): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(200);
    readings.push(await rss());
  }
  return median(readings);
}

async function request(path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const type = response.headers.get("content-type") ?? "";
  const parsed = /json/.test(type) ? await response.json() : { text: await response.text() };
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

async function submit(): Promise<string> {
  return (await request("/v1/runs", { job: "ping" })).id as string;
}

async function ended(id: string): Promise<string | null> {
  for (;;) {
    const run = await store.getRun(id);
    if (run && ENDED.has(run.status)) return run.session_id;
    await sleep(10);
  }
}

/** Runs `task` over `items`, `width` at a time. */
async function pool<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i]!);
    }
  }));
  return out;
}

async function openSessions(): Promise<number> {
  const text = (await request("/metrics")).text as string;
  return Number(/^hermes_sessions_open(?:\{\})? (\d+)/m.exec(text)?.[1] ?? NaN);
}

/** Reads one SSE stream; resolves with the time (performance.now) its `result` event arrived. */
async function client(runId: string, connected: () => void): Promise<number> {
  const response = await fetch(`${server.url}/v1/runs/${runId}/events`, {
    headers: { authorization: headers.authorization, accept: "text/event-stream" },
  });
  if (response.status !== 200) throw new Error(`events: ${response.status} ${await response.text()}`);
  connected();
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended without a result event");
      buffer += value;
      if (/^event: result$/m.test(buffer)) return performance.now();
      buffer = buffer.slice(Math.max(0, buffer.lastIndexOf("\n\n")));
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

async function storedResultAt(runId: string): Promise<number> {
  for (;;) {
    const rows = await store.runEvents(runId, 0);
    if (rows.some((row) => (row.event as { type?: string }).type === "result")) return performance.now();
    await sleep(2);
  }
}

try {
  // Idle sessions: made by runs, then a fresh server (none of the runs' garbage in its heap), warmed by a few
  // runs and prompts, opens them.
  const ids = await pool(Array.from({ length: SESSIONS }), 16, async () => await submit());
  const sessions = await pool(ids, 16, ended);
  if (sessions.some((s) => s === null)) throw new Error("a run ended without a session");
  await server.stop();
  server = await serve();
  for (let i = 0; i < 5; i++) {
    const session = await ended(await submit());
    await request(`/v1/sessions/${session}/prompt`, { text: "warm" });
  }
  const openBefore = await openSessions();
  const base = await settledRss();
  const readings = [base];
  const perStep = Math.ceil(SESSIONS / STEPS);
  for (let step = 0; step < STEPS; step++) {
    const slice = sessions.slice(step * perStep, (step + 1) * perStep) as string[];
    await pool(slice, 8, (id) => request(`/v1/sessions/${id}/prompt`, { text: "hold" }));
    readings.push(await settledRss());
  }
  const openAfter = await openSessions();
  const each = readings.slice(1).map((r, i) => (r - readings[i]!) / perStep);
  report("server RSS, warm, before the idle sessions", mib(base));
  report(`server RSS holding ${openAfter - openBefore} more idle sessions`, mib(readings.at(-1)!));
  report(
    "RSS per idle session, whole growth",
    kib((readings.at(-1)! - base) / (openAfter - openBefore)),
    "≤ 2 MiB",
  );
  report(`RSS per idle session, per step of ${perStep}: median (min–max)`, spread(each, kib), "≤ 2 MiB");
  report("sessions open in the server (hermes_sessions_open)", `${openBefore} → ${openAfter}`);

  // SSE fan-out.
  const lastLatency: number[] = [];
  const medianLatency: number[] = [];
  const addedRss: number[] = [];
  for (let round = -1; round < ROUNDS; round++) {
    const release = Promise.withResolvers<void>();
    const called = Promise.withResolvers<void>();
    hold = release.promise;
    held = called.resolve;
    const runId = await submit();
    await called.promise;
    held = undefined;
    const before = await settledRss();
    let connected = 0;
    const allConnected = Promise.withResolvers<void>();
    const arrivals = Array.from({ length: CLIENTS }, () =>
      client(runId, () => {
        if (++connected === CLIENTS) allConnected.resolve();
      }));
    await allConnected.promise;
    const withStreams = await settledRss();
    await sleep(Math.random() * 400); // at a random phase of the streams' looks at the store
    const stored = storedResultAt(runId);
    hold = undefined;
    release.resolve();
    const storedAt = await stored;
    const received = (await Promise.all(arrivals)).map((t) => t - storedAt);
    await ended(runId);
    if (round < 0) continue;
    lastLatency.push(Math.max(...received));
    medianLatency.push(median(received));
    addedRss.push(withStreams - before);
  }
  report(`SSE fan-out to ${CLIENTS}: result stored → last client, median (min–max)`, spread(lastLatency));
  report(`SSE fan-out to ${CLIENTS}: result stored → median client`, spread(medianLatency));
  report(`SSE fan-out to ${CLIENTS}: server RSS added by the open streams`, spread(addedRss, mib));
  report(`  per stream`, spread(addedRss.map((b) => b / CLIENTS), kib));
} finally {
  await server.stop();
  await store.close();
  await model.close();
  await Deno.remove(home, { recursive: true });
}
