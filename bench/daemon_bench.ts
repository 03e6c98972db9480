/**
 * `hermes daemon` with 1 000 scheduled jobs: lateness of slot starts (target p99 ≤ 50 ms), idle
 * CPU (target ≈ 0) and memory per scheduled job. The runner is a no-op, so this measures the daemon
 * (timer, claims in SQLite, run bookkeeping), not model calls.
 *
 *   deno run -A bench/daemon_bench.ts
 */
import process from "node:process";
import { DatabaseSync } from "node:sqlite";
import { type Clock, systemClock } from "../runtime/core/clock.ts";
import { silentLogger } from "../runtime/core/log.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { Daemon, type ScheduledRunner } from "../loops/daemon/daemon.ts";
import { fmt, median, percentile, report } from "./_stats.ts";

const JOBS = 1_000;

// Memory per job needs an explicit GC: re-run this script with it exposed.
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--v8-flags=--expose-gc", new URL(import.meta.url).pathname, ...Deno.args],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  Deno.exit(code);
}

const root = await Deno.makeTempDir({ prefix: "hermes-daemon-bench-" });
try {
  console.log(`${JOBS} scheduled jobs; store and job files in ${root}`);

  const idle = await jobDir("idle", () => "0 0 1 1 *");
  // Warm up module initialisation and the JIT on a few jobs so the numbers below are per job.
  const warm = await jobDir("warm", () => "0 0 1 1 *", 20);
  const warmStore = openSqliteStore(`${root}/warm.db`);
  new Daemon({ store: warmStore, clock: systemClock, log: silentLogger, paths: [warm], runner: noop([]) });
  await warmStore.close();
  gc!();
  const heapBefore = Deno.memoryUsage().heapUsed;
  const started = performance.now();
  const store = openSqliteStore(`${root}/idle.db`);
  const wakeups = { count: 0 };
  const daemon = new Daemon({
    store,
    clock: counting(wakeups),
    log: silentLogger,
    paths: [idle],
    runner: noop([]),
  });
  const loadMs = performance.now() - started;
  gc!();
  const perJob = (Deno.memoryUsage().heapUsed - heapBefore) / JOBS;
  report("load 1 000 job files (YAML + schema + cron)", fmt(loadMs));
  report("heap per scheduled job", `${(perJob / 1024).toFixed(1)} KiB`);

  const controller = new AbortController();
  const running = daemon.run(controller.signal);
  await sleep(500); // start-up scan
  const cpu = process.cpuUsage();
  const wakeupsBefore = wakeups.count;
  const idleSeconds = 10;
  await sleep(idleSeconds * 1000);
  const used = process.cpuUsage(cpu);
  controller.abort();
  await running;
  await store.close();
  const cpuMs = (used.user + used.system) / 1000;
  report(`idle CPU over ${idleSeconds} s (no slot due)`, `${(cpuMs / idleSeconds).toFixed(2)} ms/s`, "≈ 0");
  report("idle wake-ups", `${wakeups.count - wakeupsBefore} in ${idleSeconds} s`);

  await lateness("spread: every 10 s, 100 jobs per second", (i) => `${i % 10}-59/10 * * * * *`, 21);
  await lateness("burst: all 1 000 jobs every 5 s at once", () => "*/5 * * * * *", 11);
} finally {
  await Deno.remove(root, { recursive: true });
}

async function lateness(name: string, cron: (i: number) => string, seconds: number): Promise<void> {
  const dir = await jobDir(name.split(":")[0]!, cron);
  const store = openSqliteStore(`${root}/${name.split(":")[0]}.db`);
  const late: number[] = [];
  const daemon = new Daemon({
    store,
    clock: systemClock,
    log: silentLogger,
    paths: [dir],
    runner: noop(late),
  });
  const controller = new AbortController();
  const running = daemon.run(controller.signal);
  const cpu = process.cpuUsage();
  await sleep(seconds * 1000);
  const used = process.cpuUsage(cpu);
  controller.abort();
  await running;
  await store.close();
  // Bench-only SQL on the closed file: the store has no operation that counts runs.
  const db = new DatabaseSync(`${root}/${name.split(":")[0]}.db`);
  const rows = db.prepare("SELECT count(*) AS n FROM schedule_runs WHERE status = 'success'").get() as {
    n: number;
  };
  db.close();
  console.log(`\n${name} (${seconds} s, ${late.length} slot starts, ${rows.n} runs recorded)`);
  report("lateness p50", fmt(median(late)));
  report("lateness p99", fmt(percentile(late, 99)), "≤ 50 ms");
  report("lateness max", fmt(Math.max(...late)));
  report("CPU while serving", `${((used.user + used.system) / 1000 / seconds).toFixed(1)} ms/s`);
}

/** Writes JOBS job files with schedules from `cron`; returns the directory. */
async function jobDir(name: string, cron: (i: number) => string, count = JOBS): Promise<string> {
  const dir = `${root}/${name}`;
  await Deno.mkdir(dir);
  for (let i = 0; i < count; i++) {
    await Deno.writeTextFile(
      `${dir}/job-${i}.yaml`,
      `name: job-${i}\nprompt: go\nschedule: { cron: "${cron(i)}" }\n`,
    );
  }
  return dir;
}

/** A runner that records how late it was called and succeeds at once. */
function noop(late: number[]): ScheduledRunner {
  return (run) => {
    late.push(performance.timeOrigin + performance.now() - run.slot);
    return Promise.resolve({ session_id: null, status: "success" });
  };
}

function counting(counter: { count: number }): Clock {
  return {
    now: systemClock.now,
    sleep: (ms, signal) => {
      counter.count++;
      return systemClock.sleep(ms, signal);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
