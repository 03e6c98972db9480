/**
 * `hermes replay CASSETTE [--job JOB.yaml] [--tools recorded|live]`: runs a recorded job again with every
 * model answer served from its cassette (runtime/cassette/), printing what `hermes run` prints. No model
 * server is contacted: the session's provider is the cassette, and the job's is never built.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { reporting, runAndReport } from "./run.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { dirname, resolve } from "../runtime/core/path.ts";
import { parseInputFlags, renderEnv, type ResolvedJob } from "../runtime/config/job.ts";
import type { JobFile } from "../runtime/config/job_schema.ts";
import type { Cassette } from "../runtime/cassette/cassette.ts";
import type { ReplayTools } from "../runtime/cassette/tape.ts";

const FORMATS = new Set(["text", "json", "stream-json"]);
const TOOL_MODES = new Set(["recorded", "live"]);

export function main(cli: Cli): Promise<number> {
  return reporting(cli, async (seen) => {
    const { values, positionals } = parseCommandArgs("replay", cli.args);
    if (positionals.length !== 1) {
      throw new ValidationError(
        `hermes replay: expected one cassette file, got ${positionals.length}${
          positionals.length ? `: ${positionals.join(" ")}` : ""
        }`,
      );
    }
    if (values.output !== undefined && !FORMATS.has(values.output)) {
      throw new ValidationError(
        `hermes replay: invalid --output "${values.output}": expected text, json or stream-json`,
      );
    }
    const tools = values.tools ?? "recorded";
    if (!TOOL_MODES.has(tools)) {
      throw new ValidationError(`hermes replay: invalid --tools "${tools}": expected recorded or live`);
    }
    if (values.job !== undefined) seen.jobPath = values.job;
    const { loadCassette } = await import("../runtime/cassette/schema.ts");
    const path = positionals[0]!;
    const cassette = await loadCassette(path);
    seen.job = cassette.job.name;
    const job = await replayedJob(cli, cassette, {
      cassettePath: path,
      jobPath: values.job,
      inputs: parseInputFlags(values.input ?? []),
    });
    seen.job = job.spec.name;
    const { jobHash } = await import("../runtime/cassette/cassette.ts");
    if (await jobHash(job.spec, job.inputs) !== cassette.job.hash) {
      // Not a divergence in itself (a changed description asks nothing new of the model): said, then compared.
      cli.log.info(
        `the job differs from the one recorded in ${path} (${cassette.job.hash.slice(0, 19)}…): its model ` +
          "requests are compared with the recorded ones",
      );
    }
    return await runAndReport(cli, seen, {
      job,
      format: values.output ?? job.spec.output?.format ?? "text",
      config: undefined,
      source: "job",
      run: { replay: { cassette, tools: tools as ReplayTools } },
    });
  });
}

/**
 * The job a replay runs: `--job`'s file with the recorded inputs (flags over them), else the resolved job
 * the cassette holds, its `env:` templates rendered with this process's environment.
 */
async function replayedJob(
  cli: Cli,
  cassette: Cassette,
  options: { cassettePath: string; jobPath: string | undefined; inputs: Record<string, string> },
): Promise<ResolvedJob> {
  const recorded = Object.fromEntries(
    Object.entries(cassette.job.inputs).map(([name, value]) => [name, String(value)]),
  );
  if (options.jobPath !== undefined) {
    const files = await import("../runtime/config/prechecked.ts");
    const config = await files.loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
    return await files.loadJob(options.jobPath, {
      inputs: { ...recorded, ...options.inputs },
      env: cli.env,
      ...(config ? { config } : {}),
    });
  }
  const { JobFile } = await import("../runtime/config/job_schema.ts");
  const parsed = JobFile.safeParse(cassette.job.spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ValidationError(
      `${options.cassettePath}: job.spec.${issue.path.join(".")}: ${issue.message}`,
    );
  }
  const spec: JobFile = parsed.data;
  const inputs = { ...cassette.job.inputs, ...options.inputs } as ResolvedJob["inputs"];
  let dir = cassette.job.dir;
  try {
    if (!Deno.statSync(dir).isDirectory) throw new Error("not a directory");
  } catch {
    // Recorded on another machine: the cassette's folder stands in for the job's.
    dir = dirname(resolve(options.cassettePath));
  }
  return {
    spec,
    path: cassette.job.path,
    dir,
    inputs,
    env: renderEnv(
      spec.env,
      { inputs, env: cli.env },
      (path) => `${options.cassettePath}: ${path.join(".")}`,
    ),
  };
}
