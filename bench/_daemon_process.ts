/**
 * One daemon of bench/postgres_daemon_bench.ts, in a process of its own as a daemon on its own host is: the
 * real Daemon (loops/daemon/daemon.ts: its timer, batched claims, renewals, scans) over the real store, under a
 * host id of its own, with a runner that records when it was called and succeeds at once (model calls are
 * not what is measured). Prints `ready` once its jobs are loaded and the store is open, then reads
 * `START END` (epoch ms) on stdin, serves from START to END and prints one JSON line: its samples and CPU.
 *
 *   deno run -A bench/_daemon_process.ts --store postgres://…|FILE --host ID --jobs DIR [--schema NAME]
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { type Clock, systemClock } from "../runtime/core/clock.ts";
import { silentLogger } from "../runtime/core/log.ts";
import { currentProcess } from "../runtime/core/process_identity.ts";
import { isPostgresUrl } from "../runtime/store/postgres/_url.ts";
import { openPostgresStore } from "../runtime/store/postgres/postgres_store.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import type { Store } from "../runtime/store/store.ts";
import { Daemon } from "../loops/daemon/daemon.ts";

/** What a daemon reports: one `[job, slot, lateness ms]` per run it started. */
export interface DaemonSamples {
  host: string;
  runs: [string, number, number][];
  cpu_ms: number;
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    store: { type: "string" },
    host: { type: "string" },
    jobs: { type: "string" },
    schema: { type: "string" },
  },
});
const { store: location, host, jobs } = values;
if (!location || !host || !jobs) {
  throw new Error("usage: _daemon_process.ts --store URL|FILE --host ID --jobs DIR");
}

// As `hermes daemon` opens it: on PostgreSQL, claims and leases are judged on the database's clock.
let store: Store;
let clock: Clock;
if (isPostgresUrl(location)) {
  const pg = await openPostgresStore(location, { host, ...(values.schema ? { schema: values.schema } : {}) });
  store = pg;
  clock = pg.clock;
} else {
  store = openSqliteStore(location, { host });
  clock = systemClock;
}
const runs: DaemonSamples["runs"] = [];
// Lateness to the microsecond on the daemon's time line: the clock's offset from this host's, once.
const skew = clock.now() - Date.now();
const daemon = new Daemon({
  store,
  clock,
  log: silentLogger,
  paths: [jobs],
  identity: { ...currentProcess(), host },
  runner: (run) => {
    runs.push([run.job, run.slot, performance.timeOrigin + performance.now() + skew - run.slot]);
    return Promise.resolve({ session_id: null, status: "success" });
  },
});
console.log("ready");

const line = await firstLine(Deno.stdin.readable);
const [start, end] = line.split(" ").map(Number) as [number, number];
await sleep(start - Date.now());
const controller = new AbortController();
const stop = setTimeout(() => controller.abort(), end - Date.now());
const cpu = process.cpuUsage();
await daemon.run(controller.signal);
const used = process.cpuUsage(cpu);
clearTimeout(stop);
await store.close();
const samples: DaemonSamples = { host, runs, cpu_ms: (used.user + used.system) / 1000 };
console.log(JSON.stringify(samples));

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes("\n")) break;
  }
  return text.split("\n")[0]!.trim();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
