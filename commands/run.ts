/** `hermes run JOB.yaml | -p PROMPT`: run a job to completion; the product goes to stdout. */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { applyRunFlags } from "./run_flags.ts";
import { type Progress, runProgress } from "./run_progress.ts";
import { RunError, ValidationError } from "../runtime/core/errors.ts";
import { EventBus } from "../runtime/core/events.ts";
import { resultOutlet } from "../runtime/session/outlets.ts";
import { visibleText } from "../runtime/core/visible.ts";
import { exists } from "../runtime/core/fs.ts";
import { mergeConfig, parseInputFlags, type ResolvedJob, resolveJob } from "../runtime/config/job.ts";
import type { JobFile, UserConfig } from "../runtime/config/job_schema.ts";
import type { RunOptions } from "../runtime/app/app.ts";
import { cliApp } from "./_app.ts";
import { expandArgsLines } from "./_args_line.ts";
import { buildResult, endingOfError, NO_USAGE, type RunResult } from "../runtime/session/outcome.ts";
import { basename, resolve } from "../runtime/core/path.ts";
import type { Store } from "../runtime/store/store.ts";
import type { HermesEvent } from "../runtime/core/events.ts";
// Not telemetry/mod.ts: OpenTelemetry's door is imported only when settings find a collector.
import { telemetrySettings } from "../runtime/telemetry/settings.ts";
import type { Telemetry } from "../runtime/telemetry/mod.ts";
import { VERSION } from "../runtime/core/version.ts";

const FORMATS = new Set(["text", "json", "stream-json"]);

/**
 * Every exit path reports: a run that stops before it has a session (a job-file error, a bad flag, a
 * sandbox that cannot start, exit 2; a store that cannot open, exit 1) still writes the CI outputs, the
 * step summary and annotations, and the result object with `--output json`/`stream-json`, before the error
 * lines go to stderr.
 */
export async function main(cli: Cli): Promise<number> {
  return await reporting(cli, (seen) => execute(cli, seen));
}

/** Runs `body`, reporting a run that stops before it has a session as `main` says (also `hermes replay`). */
export async function reporting(cli: Cli, body: (seen: Seen) => Promise<number>): Promise<number> {
  const started = cli.clock.now();
  const seen: Seen = {};
  try {
    return await body(seen);
  } catch (error) {
    if (!seen.reported && (error instanceof ValidationError || error instanceof RunError)) {
      await reportUnstarted(cli, error, seen, started);
    }
    throw error;
  }
}

/** What the run got to know before it stopped, for the report of a run that never started. */
export interface Seen {
  format?: string;
  job?: string;
  jobPath?: string;
  /** The arguments with `--args` lines expanded, once they were. */
  args?: string[];
  /** The run's labels, once its job resolved. */
  labels?: Record<string, string>;
  /** The result was published and printed already. */
  reported?: boolean;
}

async function reportUnstarted(cli: Cli, error: Error, seen: Seen, started: number): Promise<void> {
  const ending = endingOfError({ caught: error, timeout: new AbortController().signal });
  const job = seen.job ?? (seen.jobPath ? nameIn(seen.jobPath) : "oneshot");
  // No session opened, so no session outlet: the process environment's secrets are replaced here.
  const result: RunResult = resultOutlet(cli.redact).result(buildResult(ending, {
    session_id: "",
    job,
    labels: seen.labels ?? {},
    final: "",
    output: null,
    turns: 0,
    before: NO_USAGE,
    after: NO_USAGE,
    started,
    ended: cli.clock.now(),
    compactions: 0,
  }));
  (await import("./_github.ts")).publishToGitHub(cli, result);
  const format = seen.format ?? outputFlag(seen.args ?? cli.args) ?? "text";
  if (format === "json") await cli.out(JSON.stringify(result) + "\n");
  else if (format === "stream-json") {
    // The stream's one line is a `result` event like any run's last, with its envelope (seq 1).
    const { type: _type, schema_version: _version, session_id, ...fields } = result;
    const event = new EventBus(cli.clock).emit(session_id, { type: "result", ...fields });
    await cli.out(JSON.stringify(event) + "\n");
  }
}

/** The `name:` of a job file that did not load (the summary and annotations name the job), else its file name. */
function nameIn(path: string): string {
  let text = "";
  try {
    text = Deno.readTextFileSync(path);
  } catch { /* unreadable: its file name */ }
  return /^name:\s*["']?([a-z0-9._-]+)["']?\s*(#.*)?$/m.exec(text)?.[1] ??
    basename(path).replace(/\.ya?ml$/, "");
}

/** `--output X` / `-o X` / `--output=X` from raw arguments, for a failure before they were parsed. */
function outputFlag(args: readonly string[]): string | undefined {
  let found: string | undefined;
  args.forEach((arg, i) => {
    if (arg === "--output" || arg === "-o") found = args[i + 1];
    else if (arg.startsWith("--output=")) found = arg.slice("--output=".length);
  });
  return found !== undefined && FORMATS.has(found) ? found : undefined;
}

async function execute(cli: Cli, seen: Seen): Promise<number> {
  // `--args LINE` (the GitHub Action's args input) becomes its words here, split by a fixed grammar.
  const args = expandArgsLines(cli.args);
  seen.args = args;
  const { values, positionals } = parseCommandArgs("run", args);
  if (positionals.length > 1) {
    throw new ValidationError(
      `hermes run: expected one job file, got ${positionals.length}: ${positionals.join(" ")}`,
    );
  }
  if (values.output !== undefined && !FORMATS.has(values.output)) {
    throw new ValidationError(
      `hermes run: invalid --output "${values.output}": expected text, json or stream-json`,
    );
  }
  const prompt = values.prompt === "-" ? await readStdin(cli) : values.prompt;
  const inputs = parseInputFlags(values.input ?? []);
  const jobPath = positionals[0];
  if (jobPath !== undefined) seen.jobPath = jobPath;
  const configPath = `${cli.home}/config.yaml`;
  // Reading YAML files loads yaml; a one-shot `-p` without config.yaml needs none. zod is loaded only for a
  // file the schemas compiled ahead of time do not accept (prechecked.ts).
  const files = jobPath !== undefined || cli.policyFile !== undefined || await exists(configPath)
    ? await import("../runtime/config/prechecked.ts")
    : undefined;
  const config = await files?.loadUserConfig(configPath, { policy: cli.policyFile });
  const untrusted = values.untrusted === true;
  if (values.resume !== undefined && values.label?.length) {
    // Labels are the session's from its creation (its calls are attributed by them): a resume cannot move them.
    throw new ValidationError(
      "hermes run: --label labels a new session; a resumed session keeps the labels it was created with",
    );
  }
  if (untrusted && jobPath === undefined && values.resume === undefined) {
    throw new ValidationError(
      "hermes run: --untrusted holds a job file to its policy; give JOB.yaml or --resume SESSION",
    );
  }

  let store: Store | undefined;
  try {
    let job: ResolvedJob;
    if (jobPath !== undefined && files) {
      job = await files.loadJob(jobPath, { inputs, env: cli.env, untrusted, ...(config ? { config } : {}) });
    } else if (values.resume !== undefined) {
      store = await cli.openStore();
      // Admitted under the policy of its day: held to today's before any model call.
      job = await cliApp(cli, store, config ? { config } : {}).storedJob(values.resume, { untrusted });
    } else if (prompt !== undefined) {
      // Built here, not read from a file: only config.yaml's part needed validating, and it was.
      job = resolveJob(mergeConfig({ name: "oneshot" } as JobFile, config), {
        path: null,
        dir: Deno.cwd(),
        file: "job",
        env: cli.env,
      });
    } else {
      throw new ValidationError("hermes run: expected JOB.yaml, -p PROMPT, or --resume SESSION");
    }
    seen.job = job.spec.name;
    job = applyRunFlags(job, values, { oneShot: jobPath === undefined && values.resume === undefined });
    if (job.labels) seen.labels = job.labels;
    if (job.spec.schedule) {
      // A schedule is not something `run` can honour: say so rather than let a user think it is armed.
      cli.log.warn(
        `job "${job.spec.name}" has a schedule (cron "${job.spec.schedule.cron}"): hermes run runs it once, ` +
          "now; only hermes daemon runs it on its schedule",
      );
    }
    const format = values.output ?? job.spec.output?.format ?? "text";
    return await runAndReport(cli, seen, {
      job,
      format,
      config,
      ...(store ? { store } : {}),
      source: prompt !== undefined ? "cli" : "job",
      run: {
        ...(prompt !== undefined ? { prompt } : {}),
        ...(values.resume !== undefined ? { resume: values.resume } : {}),
        ...(values.model !== undefined ? { model: values.model } : {}),
        ...(values.record !== undefined ? { record: values.record } : {}),
      },
    });
  } finally {
    await store?.close();
  }
}

/** What `runAndReport` runs: the job, how its product is printed, and the run's own options. */
export interface RunAndReport {
  job: ResolvedJob;
  format: string;
  config: UserConfig | undefined;
  /** The store, when the command opened it already (to resume); closed by the caller. */
  store?: Store;
  source: "cli" | "job";
  run: Omit<RunOptions, "job" | "publish">;
}

/**
 * Runs a loaded job through the App and prints its product (`--output`), publishing the result to CI
 * outputs: `hermes run` and `hermes replay` alike.
 */
export async function runAndReport(cli: Cli, seen: Seen, options: RunAndReport): Promise<number> {
  const { job, format, config } = options;
  seen.format = format;
  let store = options.store;
  const owned = store === undefined;
  let progress: Progress | undefined;
  let telemetry: Telemetry | undefined;
  try {
    const outputFile = job.spec.output?.file ? resolve(job.dir, job.spec.output.file) : undefined;
    store ??= await cli.openStore();
    const events = new EventBus(cli.clock);
    const settings = telemetrySettings(cli.env, config?.telemetry);
    telemetry = settings && await (await import("../runtime/telemetry/mod.ts")).startTelemetry(settings, {
      version: VERSION,
      ...(job.labels ? { labels: mapValues(job.labels, cli.redact) } : {}),
      warn: (message) => cli.log.warn(message),
    });
    telemetry?.attach(events, { resultEndsSession: true });
    const writes: Promise<void>[] = [];
    const emitLine = (event: HermesEvent) => writes.push(cli.out(JSON.stringify(event) + "\n"));
    if (format === "stream-json") events.subscribe(emitLine);
    progress = runProgress(cli);
    events.subscribe(progress.onEvent);
    const app = cliApp(cli, store, { events, config, source: options.source });
    const result = await app.run({
      ...options.run,
      job,
      // The GitHub Actions outputs are written once the run has its result: imported then.
      publish: async (result) => {
        seen.reported = true;
        const { publishToGitHub } = await import("./_github.ts");
        return publishToGitHub(cli, result, result.status === "success" ? { output_file: outputFile } : {});
      },
    });
    await Promise.all(writes);
    // The result and every event come out of the session's outlets with its secrets replaced.
    if (format === "json") await cli.out(JSON.stringify(result) + "\n");
    else if (format === "text" && result.status === "success") {
      // Exact bytes for a pipe; a terminal gets control characters as visible escapes.
      const final = result.final.replace(/\n+$/, "");
      await cli.out((cli.stdoutIsTTY ? visibleText(final) : final) + "\n");
    }
    if (result.error) cli.err(visibleText(`hermes: ${result.error}`));
    return result.exit_code;
  } finally {
    progress?.stop();
    // Before the process exits: a one-shot run's spans are exported now or never.
    await telemetry?.shutdown(new Date(cli.clock.now()));
    if (owned) await store?.close();
  }
}

async function readStdin(cli: Cli): Promise<string> {
  const text = await new Response(cli.stdin).text();
  if (text.trim() === "") throw new ValidationError("hermes run: -p - read an empty prompt from stdin");
  return text;
}

function mapValues(record: Record<string, string>, map: (value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}
