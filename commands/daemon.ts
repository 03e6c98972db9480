/**
 * `hermes daemon [JOB.yaml | DIR]...`: works the run queue and serves the jobs' cron schedules until
 * SIGTERM/SIGINT (exit 0), each due slot as a queued run (a fresh session) that this daemon's worker runs. `hermes daemon status [JOB.yaml | DIR]... [--json]` shows jobs, next slots
 * and last runs.
 */
import { resolve } from "../runtime/core/path.ts";
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { parseDuration } from "../runtime/core/duration.ts";
import { currentProcess } from "../runtime/core/process_identity.ts";
import { errorMessage, ValidationError } from "../runtime/core/errors.ts";
import { EventBus } from "../runtime/core/events.ts";
import { loadJob, loadUserConfig } from "../runtime/config/job_file.ts";
import { cliApp } from "./_app.ts";
import type { Store } from "../runtime/store/store.ts";
import { Daemon } from "../loops/daemon/daemon.ts";
import { type QueuedOutcome, QueueWorker, type RunContext } from "../loops/daemon/queue_worker.ts";
import { Notifier, notifyEntries } from "../loops/daemon/notify.ts";
import { jobOfRun, queuedRunOf } from "../runtime/app/queue.ts";
import type { NewQueuedRun, QueuedRun } from "../runtime/store/store.ts";
import { dropSlotRun, runSlot, type SlotOutcome } from "../loops/daemon/slot_runs.ts";
import type { ScheduledRun } from "../loops/daemon/daemon.ts";
import { jobFiles, loadScheduledJob, type ScheduledJob } from "../loops/daemon/jobs.ts";
import { formatStatus, jobStatus, liveDaemons, registerDaemon } from "../loops/daemon/status.ts";
import { dailyBudget } from "../loops/daemon/daily_budget.ts";
import { startTelemetry, type Telemetry, telemetrySettings } from "../runtime/telemetry/mod.ts";
import { VERSION } from "../runtime/core/version.ts";

/**
 * The queue worker of a daemon or a server: runs the queued runs here, one session each, and hands every
 * ended run to the notifier. One definition, so every process that works the queue notifies alike.
 */
export function queueWorker(
  cli: Cli,
  store: Store,
  options: {
    notifier: Notifier;
    concurrency: number;
    maxRunning: number | null;
    telemetry: Telemetry | undefined;
    graceMs?: number;
    onStored?: (runId: string) => void;
    slotsInFlight?: () => boolean;
  },
): QueueWorker {
  const { notifier, telemetry } = options;
  return new QueueWorker({
    onEnded: (run) => notifier.notify(run),
    wantsEnded: (run) => notifyEntries(run).length > 0,
    store,
    clock: cli.clock,
    log: cli.log,
    holder: currentProcess(cli.host),
    concurrency: options.concurrency,
    maxRunning: options.maxRunning,
    // PostgreSQL wakes idle workers (LISTEN/NOTIFY): the poll is only a fallback there.
    pollMs: "url" in store ? 1_000 : 100,
    runner: (run, context) => runQueued(cli, store, run, { ...context, telemetry }),
    ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
    ...(options.onStored ? { onStored: options.onStored } : {}),
    ...(options.slotsInFlight ? { slotsInFlight: options.slotsInFlight } : {}),
  });
}

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("daemon", cli.args);
  if (positionals[0] === "status") return await status(cli, positionals.slice(1), values.json ?? false);
  if (values.json) throw new ValidationError("hermes daemon: --json goes with `hermes daemon status`");
  const graceMs = values.grace === undefined ? undefined : flagDuration("--grace", values.grace);
  const concurrency = values.concurrency === undefined ? 1 : positiveInt("--concurrency", values.concurrency);
  refuseBeyondPolicy(cli, positionals);
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  const telemetry = await startTelemetry(telemetrySettings(cli.env, config?.telemetry), {
    version: VERSION,
    warn: (message) => cli.log.warn(message),
  });
  const store = await cli.openStore();
  const notifier = new Notifier({ store, clock: cli.clock, log: cli.log, env: cli.env });
  try {
    // Set once the schedules are served: the worker keeps starting their slots' runs while it stops.
    const served: { daemon?: Daemon } = {};
    const worker = queueWorker(cli, store, {
      notifier,
      concurrency,
      maxRunning: config?.queue?.max_running ?? null,
      telemetry,
      ...(graceMs !== undefined ? { graceMs } : {}),
      slotsInFlight: () => (served.daemon?.inFlight ?? 0) > 0,
    });
    if (positionals.length === 0) {
      cli.log.info(`daemon working the queue (${concurrency} at a time), no scheduled jobs`);
      await worker.run(cli.signal);
      cli.log.info(`daemon stopped (${cli.signalName() ?? "done"})`);
      return 0;
    }
    const identity = currentProcess(cli.host);
    const slots = {
      store,
      clock: cli.clock,
      log: cli.log,
      holder: worker.holder,
      wake: () => worker.wakePinned(),
    };
    const daemon = served.daemon = new Daemon({
      store,
      clock: cli.clock,
      log: cli.log,
      paths: positionals,
      identity,
      // A due slot is a queued run, so the queue's caps hold for it; this daemon's worker runs it.
      runner: (run, { signal }) => runSlot(run, () => slotRun(cli, store, run), signal, slots),
      onSlotCrashed: (job, slot) => dropSlotRun(store, job, slot, cli.clock.now()),
      resumer: (session, { signal }) =>
        runSession(cli, store, session.path, { signal, telemetry, resume: session.session_id }),
      ...(graceMs !== undefined ? { graceMs } : {}),
    });
    if (daemon.jobs().length === 0) {
      cli.log.warn("no job with a schedule found yet; watching for new job files");
    }
    const unregister = registerDaemon(
      cli.home,
      daemon.holder,
      positionals.map((path) => resolve(path)),
      cli.clock.now(),
    );
    try {
      await Promise.all([daemon.run(cli.signal), worker.run(cli.signal)]);
    } finally {
      unregister();
    }
    cli.log.info(`daemon stopped (${cli.signalName() ?? "done"})`);
    return 0;
  } finally {
    await notifier.close();
    await telemetry?.shutdown(new Date(cli.clock.now()));
    await store.close();
  }
}

/**
 * The queued run of a due slot: its job as it is now (config.yaml re-read so edits apply to the next run),
 * within what is left of the job's daily budget, or why the slot does not run.
 */
async function slotRun(cli: Cli, store: Store, slot: ScheduledRun): Promise<NewQueuedRun | SlotOutcome> {
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  let job;
  try {
    job = loadJob(slot.path, { env: cli.env, ...(config ? { config } : {}) });
  } catch (error) {
    // Recorded as the slot's note too; the log says why it failed (a policy edited since start, …).
    cli.log.warn(errorMessage(error));
    throw error;
  }
  const budget = await dailyBudget(job, store, cli.clock.now());
  if (budget && !budget.run) {
    cli.log.info(`${job.spec.name}: ${budget.note}`);
    return { session_id: null, status: "skipped", note: budget.note };
  }
  return queuedRunOf(budget?.job ?? job, { now: cli.clock.now(), trigger: "schedule" });
}

/**
 * An adopted session is resumed so its loop or heartbeat goes on. config.yaml is re-read each time so edits
 * apply to the next run.
 */
async function runSession(
  cli: Cli,
  store: Store,
  path: string,
  options: { signal: AbortSignal; telemetry: Telemetry | undefined; resume?: string },
): Promise<{ session_id: string | null; status: string; note?: string }> {
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  let job;
  try {
    job = loadJob(path, { env: cli.env, ...(config ? { config } : {}) });
  } catch (error) {
    // Recorded as the slot's note too; the log says why it failed (a policy edited since start, …).
    cli.log.warn(errorMessage(error));
    throw error;
  }
  // A resumed loop keeps its day's budget too: it spends from the same job.
  const budget = await dailyBudget(job, store, cli.clock.now());
  if (budget && !budget.run) {
    cli.log.info(`${job.spec.name}: ${budget.note}`);
    return { session_id: null, status: "skipped", note: budget.note };
  }
  if (budget) job = budget.job;
  const events = new EventBus(cli.clock);
  const detach = options.telemetry?.attach(events, { resultEndsSession: true });
  const app = cliApp(cli, store, {
    events,
    config,
    log: cli.log.child(job.spec.name),
    source: "job",
    signal: options.signal,
  });
  const result = await app.run({ job, ...(options.resume ? { resume: options.resume } : {}) }).finally(
    async () => {
      // Each run's spans leave now, not when the daemon stops.
      detach?.(new Date(cli.clock.now()));
      await options.telemetry?.flush();
    },
  );
  if (result.error) cli.log.warn(`${job.spec.name}: ${result.error}`);
  return { session_id: result.session_id, status: result.status };
}

/**
 * A queued run, through the App's run operation: its job as submitted (held to today's policy), its events
 * to the worker (stored for `runs events`), config.yaml re-read so edits apply to the next run.
 */
export async function runQueued(
  cli: Cli,
  store: Store,
  run: QueuedRun,
  options: RunContext & { telemetry: Telemetry | undefined },
): Promise<QueuedOutcome> {
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  const job = await jobOfRun(run, { env: cli.env, config });
  const events = new EventBus(cli.clock);
  events.subscribe(options.event);
  const detach = options.telemetry?.attach(events, { resultEndsSession: true });
  const app = cliApp(cli, store, {
    events,
    config,
    log: cli.log.child(job.spec.name),
    source: "job",
    signal: options.signal,
  });
  // The run's id goes with it: an approval its session parks names the run (waiting_approval).
  const result = await app.run({ job, runId: run.id }).finally(async () => {
    detach?.(new Date(cli.clock.now()));
    await options.telemetry?.flush();
  });
  if (result.error) cli.log.warn(`${job.spec.name}: run ${run.id}: ${result.error}`);
  return { status: result.status, session_id: result.session_id, result, exit_code: result.exit_code };
}

/** The scheduled jobs named now, held to the trust policy in force: a refusal is exit 2 before serving. */
function refuseBeyondPolicy(cli: Cli, paths: string[]): void {
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  if (!config?.policies?.length) return;
  const { files, named } = jobFiles(paths);
  for (const file of files) {
    if (loadScheduledJob(file, named.has(file))) loadJob(file, { validateOnly: true, config });
  }
}

async function status(cli: Cli, paths: string[], json: boolean): Promise<number> {
  const store = await cli.openStore();
  try {
    const daemons = liveDaemons(cli.home, cli.host);
    const sources = paths.length > 0 ? paths : [...new Set(daemons.flatMap((d) => d.paths))];
    const jobs: ScheduledJob[] = [];
    for (const source of sources) {
      try {
        const { files, named } = jobFiles([source]);
        for (const file of files) {
          const job = loadScheduledJob(file, named.has(file));
          if (job && !jobs.some((j) => j.name === job.name)) jobs.push(job);
        }
      } catch (error) {
        if (paths.length > 0) throw error;
        cli.err(`hermes: ${errorMessage(error)}`);
      }
    }
    const now = cli.clock.now();
    const report = await Promise.all(jobs.map((job) => jobStatus(store, job, now)));
    await cli.out(
      json ? JSON.stringify({ daemons, jobs: report }) + "\n" : formatStatus(daemons, report) + "\n",
    );
    return 0;
  } finally {
    await store.close();
  }
}

function positiveInt(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new ValidationError(`hermes daemon: invalid ${flag} "${text}": expected a positive integer`);
  }
  return Number(text);
}

function flagDuration(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch {
    throw new ValidationError(
      `hermes daemon: invalid ${flag} "${text}": expected a duration like 30s, 5m or 1h30m`,
    );
  }
}
