/**
 * `hermes runs list|show|wait|cancel|events`: the queued runs (`hermes submit`, scheduled slots) from
 * scripts. `wait` exits with the run's own exit code; `events --follow` streams a run's events as
 * `run --output stream-json` prints them.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { splitSubcommand } from "./_flags.ts";
import { ExitCode, ValidationError } from "../runtime/core/errors.ts";
import { parseDuration } from "../runtime/core/duration.ts";
import { didYouMean } from "../runtime/core/suggest.ts";
import { visibleText } from "../runtime/core/visible.ts";
import type { App } from "../runtime/app/app.ts";
import { hasEnded } from "../runtime/app/queue.ts";
import { exitCodeOfRun, resultOfRun } from "../runtime/session/queued_result.ts";
import type { QueuedRun, Store } from "../runtime/store/store.ts";
import { cliApp } from "./_app.ts";

type Subcommand = (cli: Cli, args: string[], app: App, store: Store) => Promise<number>;

const SUBCOMMANDS: Record<string, Subcommand> = { list, show, wait, cancel, events };

export async function main(cli: Cli): Promise<number> {
  const { name, rest } = splitSubcommand(cli.args);
  if (name === undefined || name === "help") {
    const { commandHelp } = await import("./_help.ts");
    if (name === undefined) cli.err(commandHelp("runs")!);
    else await cli.out(commandHelp("runs")! + "\n");
    return name === undefined ? ExitCode.invalid : ExitCode.success;
  }
  const run = SUBCOMMANDS[name];
  if (!run) {
    const names = Object.keys(SUBCOMMANDS);
    throw new ValidationError(
      `unknown command "runs ${name}"${didYouMean(name, names)}: expected one of ${names.join(", ")}`,
    );
  }
  const store = await cli.openStore();
  try {
    return await run(cli, rest, cliApp(cli, store), store);
  } finally {
    await store.close();
  }
}

async function list(cli: Cli, args: string[], app: App): Promise<number> {
  const { values, positionals } = parseCommandArgs("runs list", args);
  if (positionals.length > 0) throw new ValidationError(`hermes runs list: unexpected "${positionals[0]}"`);
  const limit = values.limit === undefined ? 50 : positiveInt("runs list", "--limit", values.limit);
  const runs = await app.runs({
    limit,
    ...(values.status !== undefined ? { status: values.status } : {}),
    ...(values.job !== undefined ? { job: values.job } : {}),
  });
  if (values.json) {
    await cli.out(JSON.stringify(runs.map(publicRun)) + "\n");
    return 0;
  }
  const lines = runs.map((r) =>
    [r.id, r.status.padEnd(11), r.job, iso(r.submitted_at), r.session_id ?? "-"].join("  ")
  );
  await cli.out(lines.length ? lines.join("\n") + "\n" : "");
  return 0;
}

async function show(cli: Cli, args: string[], app: App, store: Store): Promise<number> {
  const { values, positionals } = parseCommandArgs("runs show", args);
  const run = await app.getRun(oneRun("runs show", positionals));
  const waiting = await waitingFor(run, store, cli.clock.now());
  const deliveries = await store.runDeliveries(run.id);
  if (values.json) {
    await cli.out(JSON.stringify({ ...publicRun(run), waiting, deliveries }) + "\n");
    return 0;
  }
  const rows: [string, string | number | null][] = [
    ["run", run.id],
    ["job", run.job + (run.job_path ? ` (${run.job_path})` : "")],
    ["status", run.status + (run.cancel_requested && run.status === "running" ? " (cancel requested)" : "")],
    ["waiting", waiting],
    ["priority", run.priority],
    ["not before", run.not_before === null ? null : iso(run.not_before)],
    ["group", run.group === null ? null : `${run.group} (limit ${run.group_limit})`],
    ["model", run.model],
    ["key", run.key],
    ["trigger", run.trigger],
    ["attempts", run.attempts],
    ["worker", run.holder ? `${run.holder.host}:${run.holder.pid}` : null],
    ["session", run.session_id],
    ["submitted", iso(run.submitted_at)],
    ["started", run.started_at === null ? null : iso(run.started_at)],
    ["finished", run.finished_at === null ? null : iso(run.finished_at)],
    ["exit code", run.exit_code],
    ["note", run.note],
  ];
  for (const d of deliveries) {
    const answer = d.response_status === null ? "" : ` (${d.response_status})`;
    rows.push(["notified", `${d.event} to ${d.target}: ${d.status} after ${d.attempts} attempt(s)${answer}`]);
  }
  const text = rows.filter(([, v]) => v !== null).map(([k, v]) => `${(k + ":").padEnd(12)}${v}`).join("\n");
  await cli.out(visibleText(text) + "\n");
  return 0;
}

async function wait(cli: Cli, args: string[], app: App): Promise<number> {
  const { values, positionals } = parseCommandArgs("runs wait", args);
  const ref = oneRun("runs wait", positionals);
  const output = values.output ?? "text";
  if (output !== "text" && output !== "json") {
    throw new ValidationError(`hermes runs wait: invalid --output "${output}": expected text or json`);
  }
  let timeoutMs: number | undefined;
  if (values.timeout !== undefined) {
    try {
      timeoutMs = parseDuration(values.timeout);
    } catch {
      throw new ValidationError(
        `hermes runs wait: invalid --timeout "${values.timeout}": expected a duration like 30s, 5m or 1h30m`,
      );
    }
  }
  const signals = [cli.signal, ...(timeoutMs !== undefined ? [AbortSignal.timeout(timeoutMs)] : [])];
  const signal = AbortSignal.any(signals);
  let run: QueuedRun;
  try {
    run = await app.waitRun(ref, { signal });
  } catch (error) {
    if (!signal.aborted) throw error;
    if (cli.signal.aborted) throw error;
    cli.err(`hermes: run ${ref} has not ended after ${values.timeout}`);
    return ExitCode.limit;
  }
  const result = resultOfRun(run);
  if (output === "json") await cli.out(JSON.stringify(result) + "\n");
  else if (result.status === "success") {
    const final = result.final.replace(/\n+$/, "");
    await cli.out((cli.stdoutIsTTY ? visibleText(final) : final) + "\n");
  }
  if (result.error) cli.err(visibleText(`hermes: ${result.error}`));
  return exitCodeOfRun(run);
}

async function cancel(cli: Cli, args: string[], app: App): Promise<number> {
  const { values, positionals } = parseCommandArgs("runs cancel", args);
  const run = await app.cancelRun(oneRun("runs cancel", positionals));
  if (values.json) await cli.out(JSON.stringify(publicRun(run)) + "\n");
  else if (run.status === "cancelled") await cli.out(`run ${run.id}: cancelled\n`);
  else if (run.status === "running") await cli.out(`run ${run.id}: running; its worker is stopping it\n`);
  else await cli.out(`run ${run.id}: already ended (${run.status}); nothing to cancel\n`);
  return 0;
}

async function events(cli: Cli, args: string[], app: App): Promise<number> {
  const { values, positionals } = parseCommandArgs("runs events", args);
  const ref = oneRun("runs events", positionals);
  const id = (await app.getRun(ref)).id;
  let after = 0;
  for (;;) {
    // Read whether it ended before the events: those stored before the end are all there is then.
    const ended = hasEnded(await app.getRun(id));
    for (const row of await app.runEvents(id, after)) {
      await cli.out(JSON.stringify(row.event) + "\n");
      after = row.seq;
    }
    if (!values.follow || ended || cli.signal.aborted) return 0;
    await cli.clock.sleep(200, cli.signal).catch(() => {});
  }
}

/** Why a queued run has not started yet, or null. */
async function waitingFor(run: QueuedRun, store: Store, now: number): Promise<string | null> {
  if (run.status !== "queued") return null;
  if (run.not_before !== null && run.not_before > now) return `not before ${iso(run.not_before)}`;
  const hold = run.model === null ? undefined : (await store.modelHolds(now))[run.model];
  if (hold !== undefined) return `model ${run.model} is rate-limited until ${iso(hold)}`;
  if (run.group !== null && run.group_limit !== null) {
    const running = await store.groupRunning(run.group);
    if (running >= run.group_limit) {
      return `for its group ${run.group}: ${running} of ${run.group_limit} running`;
    }
  }
  return "for a free worker";
}

/** The record as `runs show --json` prints it: the job snapshot is left out (it is the job, not the run). */
function publicRun(run: QueuedRun): Omit<QueuedRun, "job_snapshot"> {
  const { job_snapshot: _snapshot, ...rest } = run;
  return rest;
}

function oneRun(command: string, positionals: string[]): string {
  if (positionals.length !== 1) {
    throw new ValidationError(`hermes ${command}: expected one RUN id, got ${positionals.length}`);
  }
  return positionals[0]!;
}

function positiveInt(command: string, flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1) {
    throw new ValidationError(`hermes ${command}: invalid ${flag} "${text}": expected a positive integer`);
  }
  return n;
}

const iso = (ms: number) => new Date(ms).toISOString();
