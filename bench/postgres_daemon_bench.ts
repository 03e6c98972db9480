/**
 * 4 daemons × 1 000 jobs on one PostgreSQL: slot lateness (target p99 ≤ 50 ms), doubled
 * slots (target 0) and slot claims/s.
 *
 * Four daemon processes (bench/_daemon_process.ts), each with a host id of its own, serve the same 1 000 job
 * files through one PostgreSQL store, so every slot is contended four ways, as on four hosts sharing a
 * schedule directory. Each is the real Daemon of `hermes daemon` (loops/daemon/daemon.ts: one timer, a batched claim
 * per due instant, renewals, scans for stale claims) over the real store; only its runner is a no-op that
 * records when it was called, so this measures scheduling and claiming, not model calls (a real `hermes
 * daemon` would start 100–1 000 sessions a second here, which two cores cannot). The four processes and the
 * server share this machine's cores, where four hosts would not: the figures are an upper bound.
 *
 * - lateness: from a slot's scheduled instant (on the database's clock, which the daemons schedule by) to
 *   the call of its runner, after the winning claim committed; slots of the first 2 s (JIT warm-up, first
 *   connections) are left out of the percentiles, not out of the counts.
 * - doubled: slots whose runner was called more than once, by any daemon; missed: slots due in the window
 *   that no daemon ran. Both are counted over every slot of every run.
 * - claims/s: per due instant, the slots due then over the time until the last of them had started.
 *
 * The baseline, interleaved run by run (A B A B …): one such daemon process on SQLite, the single-host setup
 * of the "daemon with 1 000 cron jobs" budget. PostgreSQL is the server named by --url or
 * HERMES_TEST_POSTGRES_URL, in a fresh schema per run, dropped at the end; without one the bench says so.
 *
 *   deno run -A bench/postgres_daemon_bench.ts [--url postgres://…] [--rounds N] [--seconds S] [--daemons N]
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { clientOptions, parsePostgresUrl } from "../runtime/store/postgres/_url.ts";
import { compileSchedule } from "../loops/daemon/cron_slots.ts";
import type { DaemonSamples } from "./_daemon_process.ts";
import { median, percentile, ratio, report, spread } from "./_stats.ts";
import { benchPostgresUrl } from "./_postgres_url.ts";

const JOBS = 1_000;
const WARMUP_MS = 2_000;
const CHILD = new URL("./_daemon_process.ts", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    url: { type: "string" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "12" },
    daemons: { type: "string", default: "4" },
  },
});
const url = benchPostgresUrl(values.url, "postgres daemon bench");
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
/** Daemon processes on PostgreSQL (`--daemons 1` separates the store's cost from the contention's). */
const DAEMONS = Number(values.daemons);

const SCENARIOS = [
  { name: "spread: every 10 s, 100 jobs per second", cron: (i: number) => `${i % 10}-59/10 * * * * *` },
  { name: "burst: all 1 000 jobs every 5 s at once", cron: () => "*/5 * * * * *" },
];

interface RunResult {
  late: number[];
  doubled: number;
  missed: number;
  ran: number;
  claimsPerSecond: number[];
  cpuMsPerSecond: number;
  statuses: Record<string, number>;
  hosts: number;
}

const root = await Deno.makeTempDir({ prefix: "hermes-pg-daemon-bench-" });
const admin = postgres({ ...clientOptions(parsePostgresUrl(url)), max: 1, onnotice: () => {} });
const schemas: string[] = [];
try {
  console.log(
    `${DAEMONS} daemon processes × ${JOBS} jobs on PostgreSQL vs 1 daemon process on SQLite; ` +
      `${seconds} s per run, ${rounds} runs per case, interleaved`,
  );
  for (const [index, scenario] of SCENARIOS.entries()) {
    const dir = await jobDir(`jobs-${index}`, scenario.cron);
    const results: Record<"pg" | "sqlite", RunResult[]> = { pg: [], sqlite: [] };
    for (let round = 0; round < rounds; round++) {
      const schema = `hermes_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
      schemas.push(schema);
      results.pg.push(
        await serve(
          dir,
          scenario.cron,
          Array.from({ length: DAEMONS }, (_, d) => ({
            host: `bench-host-${d}`,
            store: url,
            schema,
          })),
        ),
      );
      results.sqlite.push(
        await serve(dir, scenario.cron, [{ host: "bench-host-0", store: `${root}/${index}-${round}.db` }]),
      );
    }
    console.log(`\n${scenario.name} (per run: median (min–max) over ${rounds} runs)`);
    const cases: [string, RunResult[]][] = [
      [`${DAEMONS} daemon${DAEMONS === 1 ? "" : "s"}, PostgreSQL`, results.pg],
      ["1 daemon, SQLite", results.sqlite],
    ];
    for (const [name, runs] of cases) {
      const slots = runs.reduce((n, r) => n + r.ran, 0);
      report(`${name}: slots run`, `${slots} (${runs.map((r) => r.hosts).join("/")} hosts won claims)`);
      report(`${name}: lateness p50`, spread(runs.map((r) => median(r.late))));
      report(
        `${name}: lateness p99`,
        spread(runs.map((r) => percentile(r.late, 99))),
        name.includes("PostgreSQL") ? "≤ 50 ms" : undefined,
      );
      report(`${name}: lateness max`, spread(runs.map((r) => Math.max(...r.late))));
      report(`${name}: doubled slots`, String(runs.reduce((n, r) => n + r.doubled, 0)), "0");
      report(`${name}: missed slots`, String(runs.reduce((n, r) => n + r.missed, 0)), "0");
      report(
        `${name}: claims/s per due instant`,
        spread(runs.map((r) => median(r.claimsPerSecond)), (n) => n.toFixed(0)),
      );
      report(`${name}: CPU per daemon while serving`, spread(runs.map((r) => r.cpuMsPerSecond), perSecond));
      const statuses = runs.map((r) => r.statuses).reduce((all, s) => {
        for (const [k, v] of Object.entries(s)) all[k] = (all[k] ?? 0) + v;
        return all;
      }, {});
      report(`${name}: recorded runs by status`, JSON.stringify(statuses));
    }
    report(
      `lateness p99, PostgreSQL ×${DAEMONS} / SQLite ×1`,
      ratio(results.pg.map((r) => percentile(r.late, 99)), results.sqlite.map((r) => percentile(r.late, 99))),
    );
  }
} finally {
  for (const schema of schemas) await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end({ timeout: 5 });
  await Deno.remove(root, { recursive: true });
}

/** Runs `daemons` (one process each) over one window; what they did, checked against the schedule. */
async function serve(
  dir: string,
  cron: (i: number) => string,
  daemons: { host: string; store: string; schema?: string }[],
): Promise<RunResult> {
  const children = daemons.map((d) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        CHILD,
        "--store",
        d.store,
        "--host",
        d.host,
        "--jobs",
        dir,
        ...(d.schema ? ["--schema", d.schema] : []),
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn()
  );
  const lines = children.map((child) => lineReader(child.stdout));
  for (const next of lines) {
    const line = await next();
    if (line !== "ready") throw new Error(`a daemon process said ${JSON.stringify(line)}, not ready`);
  }
  // Start half a second before a whole second, so every slot of the window is 500 ms from either edge.
  const start = Math.ceil((Date.now() + 300) / 1000) * 1000 + 500;
  const end = start + seconds * 1000;
  for (const child of children) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(`${start} ${end}\n`));
    await writer.close();
  }
  const samples: DaemonSamples[] = [];
  for (const next of lines) samples.push(JSON.parse((await next()) ?? "null") as DaemonSamples);
  for (const child of children) {
    const { code } = await child.status;
    if (code !== 0) throw new Error(`a daemon process exited ${code}`);
  }

  const count = new Map<string, number>();
  const late: number[] = [];
  const byInstant = new Map<number, number[]>();
  for (const { runs } of samples) {
    for (const [job, slot, ms] of runs) {
      const key = `${job} ${slot}`;
      count.set(key, (count.get(key) ?? 0) + 1);
      if (slot >= start + WARMUP_MS) late.push(ms);
      byInstant.set(slot, [...(byInstant.get(slot) ?? []), ms]);
    }
  }
  let missed = 0;
  for (let i = 0; i < JOBS; i++) {
    const slots = compileSchedule({ cron: cron(i) }, () => "bench");
    for (let slot = slots.nextAfter(start); slot !== null && slot < end; slot = slots.nextAfter(slot)) {
      if (!count.has(`job-${i} ${slot}`)) missed++;
    }
  }
  const first = daemons[0]!;
  return {
    late,
    doubled: [...count.values()].filter((n) => n > 1).length,
    missed,
    ran: count.size,
    claimsPerSecond: [...byInstant.values()].map((ms) => ms.length / (Math.max(...ms) / 1000)),
    cpuMsPerSecond: median(samples.map((s) => s.cpu_ms)) / seconds,
    statuses: await statusCounts(first.store, first.schema),
    hosts: samples.filter((s) => s.runs.length > 0).length,
  };
}

/** The recorded runs by status (bench-only SQL: the store has no operation that counts runs). */
async function statusCounts(store: string, schema: string | undefined): Promise<Record<string, number>> {
  if (schema) {
    const rows = await admin.unsafe(
      `SELECT status, count(*)::int AS n FROM ${schema}.schedule_runs GROUP BY 1`,
    );
    return Object.fromEntries(rows.map((r) => [String(r.status), Number(r.n)]));
  }
  const db = new DatabaseSync(store);
  const rows = db.prepare("SELECT status, count(*) AS n FROM schedule_runs GROUP BY 1").all() as {
    status: string;
    n: number;
  }[];
  db.close();
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Writes JOBS job files with schedules from `cron`; returns the directory. */
async function jobDir(name: string, cron: (i: number) => string): Promise<string> {
  const dir = `${root}/${name}`;
  await Deno.mkdir(dir);
  for (let i = 0; i < JOBS; i++) {
    await Deno.writeTextFile(
      `${dir}/job-${i}.yaml`,
      `name: job-${i}\nprompt: go\nschedule: { cron: "${cron(i)}" }\n`,
    );
  }
  return dir;
}

/** Reads a stream line by line: each call resolves with the next line, or null at its end. */
function lineReader(stream: ReadableStream<Uint8Array>): () => Promise<string | null> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  return async () => {
    for (;;) {
      const newline = buffered.indexOf("\n");
      if (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        return line;
      }
      const { value, done } = await reader.read();
      if (done) {
        const rest = buffered;
        buffered = "";
        return rest || null;
      }
      buffered += value;
    }
  };
}

function perSecond(ms: number): string {
  return `${ms.toFixed(1)} ms/s`;
}
