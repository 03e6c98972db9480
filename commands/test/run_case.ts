/**
 * Runs one test case: the job's folder copied to a temporary folder (tools write there, never into the
 * repository), its own store there, the model's answers from the case's cassette (replayed: no model
 * server) or scripted replies — or, with `--live` and `--update`, from the job's real model — then its
 * expectations checked against the result, the events and the copied folder.
 */
import type { Cli } from "../_cli.ts";
import { App } from "../../runtime/app/mod.ts";
import { EventBus, type HermesEvent } from "../../runtime/core/events.ts";
import { errorMessage, RunError, ValidationError } from "../../runtime/core/errors.ts";
import { createLogger } from "../../runtime/core/log.ts";
import { basename, dirname, join } from "../../runtime/core/path.ts";
import type { ResolvedJob } from "../../runtime/config/job.ts";
import type { JobFile, UserConfig } from "../../runtime/config/job_schema.ts";
import type { RunResult } from "../../runtime/session/outcome.ts";
import type { RunOptions } from "../../runtime/app/app.ts";
import type { LoadedCase } from "./case_file.ts";
import { checkExpectations, type Failure } from "./expect.ts";

/** Where a case's model answers come from: its cassette or replies, the real model, or the real model recorded. */
export type CaseMode = "offline" | "live" | "update";

export interface CaseOutcome {
  passed: boolean;
  failures: Failure[];
  /** The run's result; null when the case could not start (its job did not load). */
  result: RunResult | null;
  duration_ms: number;
  /** Warnings and errors the run logged. */
  log: string[];
}

export interface CaseOptions {
  mode: CaseMode;
  config: UserConfig | undefined;
  /** `--max-budget-usd` left: the run's limits.max_cost_usd. */
  budgetUsd?: number;
}

export async function runCase(cli: Cli, testCase: LoadedCase, options: CaseOptions): Promise<CaseOutcome> {
  const started = performance.now();
  const log: string[] = [];
  const tmp = await Deno.makeTempDir({ prefix: "hermes-test-" });
  const done = (failures: Failure[], result: RunResult | null): CaseOutcome => ({
    passed: failures.length === 0,
    failures,
    result,
    duration_ms: Math.round(performance.now() - started),
    log,
  });
  try {
    const workDir = join(tmp, "job");
    await copyDir(dirname(testCase.jobPath), workDir);
    let job: ResolvedJob;
    let run: Partial<RunOptions>;
    try {
      ({ job, run } = await prepare(cli, testCase, {
        ...options,
        tmp,
        jobPath: join(workDir, basename(testCase.jobPath)),
      }));
    } catch (error) {
      if (!(error instanceof ValidationError || error instanceof RunError)) throw error;
      return done([{
        path: ["job"],
        expected: "a job that loads",
        actual: errorMessage(error),
        where: testCase.spec.job,
      }], null);
    }
    const { openStore } = await import("../../runtime/store/open.ts");
    const store = await openStore(join(tmp, "state.db"), { clock: cli.clock, host: cli.host });
    const events = new EventBus(cli.clock);
    const seen: HermesEvent[] = [];
    events.subscribe((event) => seen.push(event));
    try {
      const app = new App({
        store,
        events,
        clock: cli.clock,
        log: createLogger({ level: "warn", write: (line) => log.push(line), redact: cli.redact }),
        env: cli.env,
        host: cli.host,
        config: options.config,
        cwd: workDir,
        source: "job",
        signal: cli.signal,
      });
      let result: RunResult;
      try {
        result = await app.run({ ...run, job });
      } catch (error) {
        if (!(error instanceof ValidationError || error instanceof RunError)) throw error;
        return done([{
          path: ["job"],
          expected: "a job that starts",
          actual: errorMessage(error),
          where: testCase.spec.job,
        }], null);
      }
      const failures = await checkExpectations(testCase.spec.expect, { result, events: seen, workDir });
      return done(failures, result);
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The case's job, loaded from its copy, with the model's answers from where the case and mode say. */
async function prepare(
  cli: Cli,
  testCase: LoadedCase,
  options: CaseOptions & { tmp: string; jobPath: string },
): Promise<{ job: ResolvedJob; run: Partial<RunOptions> }> {
  const files = await import("../../runtime/config/prechecked.ts");
  const inputs = Object.fromEntries(
    Object.entries(testCase.spec.inputs ?? {}).map(([name, value]) => [name, String(value)]),
  );
  let job = await files.loadJob(options.jobPath, {
    inputs,
    env: cli.env,
    ...(options.config ? { config: options.config } : {}),
  });
  // The job's own record: would write into the copy; a case's recording is --update's.
  const { record: _record, ...spec } = job.spec;
  job = { ...job, spec: budgeted(spec, options.budgetUsd) };
  const { spec: { replies }, cassettePath } = testCase;
  if (options.mode === "update" && cassettePath !== undefined) {
    return { job, run: { record: cassettePath } };
  }
  if (options.mode !== "offline") return { job, run: {} };
  if (cassettePath !== undefined) {
    const { loadCassette } = await import("../../runtime/cassette/schema.ts");
    const cassette = await loadCassette(cassettePath);
    return { job, run: { replay: { cassette, tools: testCase.spec.tools ?? "recorded" } } };
  }
  if (replies !== undefined) {
    const script = join(options.tmp, "replies.json");
    await Deno.writeTextFile(script, JSON.stringify(replies));
    // The model's name and price stay (cost expectations), its answers are the replies.
    const model = job.spec.model ?? {};
    job = {
      ...job,
      spec: {
        ...job.spec,
        model: {
          provider: "scripted",
          script,
          ...(model.name !== undefined ? { name: model.name } : {}),
          ...(model.pricing !== undefined ? { pricing: model.pricing } : {}),
          ...(model.context_window !== undefined ? { context_window: model.context_window } : {}),
          ...(model.max_output_tokens !== undefined ? { max_output_tokens: model.max_output_tokens } : {}),
          // `script` is the scripted provider's own key: the job schema's type names only the shared ones.
        } as JobFile["model"],
      },
    };
    return { job, run: {} };
  }
  throw new ValidationError(
    `${testCase.file}: the case has neither cassette nor replies: it can only run with --live`,
  );
}

function budgeted(spec: JobFile, budgetUsd: number | undefined): JobFile {
  if (budgetUsd === undefined) return spec;
  const limit = spec.limits?.max_cost_usd;
  return {
    ...spec,
    limits: { ...spec.limits, max_cost_usd: limit === undefined ? budgetUsd : Math.min(limit, budgetUsd) },
  };
}

/** Copies a folder (files, folders, symbolic links as links) to `to`. */
async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isSymlink) await Deno.symlink(await Deno.readLink(source), target);
    else if (entry.isDirectory) await copyDir(source, target);
    else if (entry.isFile) await Deno.copyFile(source, target);
  }
}
