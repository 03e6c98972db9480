/**
 * `hermes test [PATH…]`: runs the `*.test.yaml` cases found under PATH (default: the current folder), each
 * in its own copy of its job's folder with its own store (commands/test/run_case.ts), `--jobs N` at a time,
 * and reports them (commands/test/report.ts). Exit 0 when every case passes, 1 when one fails, 2 when a case
 * file is invalid.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { errorMessage, ValidationError } from "../runtime/core/errors.ts";
import { join, resolve } from "../runtime/core/path.ts";
import { loadCase, type LoadedCase } from "./test/case_file.ts";
import { type CaseMode, type CaseOutcome, runCase } from "./test/run_case.ts";
import {
  type CaseReport,
  githubAnnotations,
  githubSummary,
  render,
  type Reporter,
  REPORTERS,
  summaryLine,
} from "./test/report.ts";

const CASE_FILE = /\.test\.ya?ml$/;

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("test", cli.args);
  const reporter = (values.reporter ?? "text") as Reporter;
  if (!REPORTERS.includes(reporter)) {
    throw new ValidationError(
      `hermes test: invalid --reporter "${values.reporter}": expected ${REPORTERS.join(", ")}`,
    );
  }
  const jobs = count("jobs", values.jobs ?? "1");
  const repeat = count("repeat", values.repeat ?? "1");
  if (values.repeat !== undefined && !values.live) {
    throw new ValidationError("hermes test: --repeat goes with --live (runs against the real model)");
  }
  if (values.live && values.update) {
    throw new ValidationError("hermes test: --live and --update: choose one");
  }
  const mode: CaseMode = values.update ? "update" : values.live ? "live" : "offline";
  let budget: number | undefined;
  if (values["max-budget-usd"] !== undefined) {
    if (mode === "offline") {
      throw new ValidationError(
        "hermes test: --max-budget-usd goes with --update or --live (real model calls)",
      );
    }
    budget = Number(values["max-budget-usd"]);
    if (!/^\s*\d*\.?\d+\s*$/.test(values["max-budget-usd"]) || !(budget > 0)) {
      throw new ValidationError(
        `hermes test: invalid --max-budget-usd "${
          values["max-budget-usd"]
        }": expected a positive amount like 0.50`,
      );
    }
  }

  const files = await caseFiles(positionals.length ? positionals : ["."]);
  const cases = loadAll(files, mode);
  const { loadUserConfig } = await import("../runtime/config/prechecked.ts");
  const config = await loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });

  let spent = 0;
  const runOne = async (testCase: LoadedCase): Promise<CaseOutcome> => {
    if (budget !== undefined && spent >= budget) {
      return {
        passed: false,
        failures: [{
          path: ["job"],
          expected: "a run",
          actual: `not run: --max-budget-usd ${budget} spent ($${spent.toFixed(4)})`,
          where: "hermes test",
        }],
        result: null,
        duration_ms: 0,
        log: [],
      };
    }
    const outcome = await runCase(cli, testCase, {
      mode,
      config,
      ...(budget !== undefined ? { budgetUsd: budget - spent } : {}),
    });
    spent += outcome.result?.cost_usd ?? 0;
    return outcome;
  };
  const work = cases.flatMap((testCase, index) =>
    Array.from({ length: repeat }, () => ({ testCase, index }))
  );
  const outcomes: CaseOutcome[][] = cases.map(() => []);
  await pool(work, jobs, async ({ testCase, index }) => {
    outcomes[index]!.push(await runOne(testCase));
  });
  const reports: CaseReport[] = cases.map((testCase, i) => {
    const runs = outcomes[i]!;
    if (mode !== "live" || repeat === 1) {
      return {
        case: testCase,
        runs,
        passed: runs.every((run) => run.passed),
      };
    }
    const rate = runs.filter((run) => run.passed).length / runs.length;
    const required = testCase.spec.pass_rate ?? 1;
    return { case: testCase, runs, passed: rate >= required, rate: { passed: rate, required } };
  });

  const report = render(reporter, reports, { tty: cli.stdoutIsTTY });
  if (values["report-file"] !== undefined) {
    try {
      await Deno.writeTextFile(values["report-file"], report);
    } catch (error) {
      throw new ValidationError(
        `hermes test: Cannot write --report-file ${values["report-file"]}: ${errorMessage(error)}`,
      );
    }
    await cli.out(render("text", reports, { tty: cli.stdoutIsTTY }));
  } else {
    await cli.out(report);
  }
  if (reporter !== "text" || values["report-file"] !== undefined) cli.log.info(summaryLine(reports));
  await publish(cli, reports);
  return reports.every((r) => r.passed) ? 0 : 1;
}

function count(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new ValidationError(`hermes test: invalid --${flag} "${text}": expected a positive whole number`);
  }
  return n;
}

/** The case files PATHs name: files as given, folders searched (dot folders and node_modules skipped). */
async function caseFiles(paths: string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries: Deno.DirEntry[] = [];
    for await (const entry of Deno.readDir(dir)) entries.push(entry);
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const entry of entries) {
      const path = dir === "." ? entry.name : join(dir, entry.name);
      if (entry.isDirectory && !entry.name.startsWith(".") && entry.name !== "node_modules") await walk(path);
      else if (entry.isFile && CASE_FILE.test(entry.name)) found.push(path);
    }
  };
  for (const path of paths) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch {
      throw new ValidationError(`hermes test: Cannot read "${path}": no such file or folder`);
    }
    if (info.isDirectory) await walk(path.replace(/\/$/, "") || "/");
    else found.push(path);
  }
  if (found.length === 0) {
    throw new ValidationError(`hermes test: no *.test.yaml case files in ${paths.join(", ")}`);
  }
  return [...new Set(found)];
}

/** Every case file checked before any runs: all their problems at once, exit 2. */
function loadAll(files: string[], mode: CaseMode): LoadedCase[] {
  const problems: string[] = [];
  const cases: LoadedCase[] = [];
  for (const file of files) {
    try {
      const testCase = loadCase(file);
      if (mode === "offline" && testCase.cassettePath === undefined && testCase.spec.replies === undefined) {
        throw new ValidationError(
          `${file}:${
            testCase.lineOf(["job"])
          }:1: the case has neither cassette: nor replies:, so it can only ` +
            "run with --live",
        );
      }
      if (mode === "update" && testCase.cassettePath === undefined) continue;
      cases.push(testCase);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      problems.push(error.message);
    }
  }
  if (problems.length) throw new ValidationError(problems.join("\n"));
  if (cases.length === 0) {
    throw new ValidationError("hermes test --update: no case has a cassette: to record");
  }
  return cases;
}

async function pool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
}

/** Under GitHub Actions: annotations on the case files' lines, and the step summary. */
async function publish(cli: Cli, reports: readonly CaseReport[]): Promise<void> {
  if (cli.env.GITHUB_ACTIONS === "true") {
    // Composed here with every value escaped: written as commands, not made inert like other stderr lines.
    const write = cli.workflowCommand ?? cli.err;
    for (const line of githubAnnotations(reports)) write(line);
  }
  const summary = cli.env.GITHUB_STEP_SUMMARY;
  if (summary) {
    try {
      await Deno.writeTextFile(resolve(summary), githubSummary(reports), { append: true });
    } catch (error) {
      cli.log.warn(`Cannot write GITHUB_STEP_SUMMARY ${summary}: ${errorMessage(error)}`);
    }
  }
}
