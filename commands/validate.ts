/**
 * `hermes validate JOB.yaml|DIR... [--deep]`: everything `run` or `daemon` would refuse on this machine,
 * without a model call; every problem of a file, one `file:line:col: key.path: …` line each. Exit 0 when
 * every file is valid, else 2. `--deep` also starts the plugins and MCP servers. The verdict is the App's
 * (`validateJob`), the one RPC `job.validate` gives.
 *
 * A directory stands for the job files in it: `*.yaml`/`*.yml` files whose text has a top-level `name:` and
 * one of `prompt:`, `steps:`, `schedule:`, `model:`, `tools:`, `plugins:` or `mcp_servers:`, or that carry
 * the modeline `# yaml-language-server: $schema=…job.schema.json`. Other YAML (replies, config.yaml, a
 * workflow, compose files) is skipped, and each skipped file is named on stderr.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { loadUserConfig } from "../runtime/config/job_file.ts";
import { validateJob } from "../runtime/app/mod.ts";

interface FileResult {
  file: string;
  valid: boolean;
  job?: string;
  error?: string;
  errors?: readonly string[];
}

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("validate", cli.args);
  if (positionals.length === 0) {
    throw new ValidationError("hermes validate: expected at least one JOB.yaml or DIR");
  }
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  // "." keeps each file named as typed in the lines printed.
  const scope = { config, cwd: ".", env: cli.env, clock: cli.clock };
  const results: FileResult[] = [];
  const { files, skipped } = jobFiles(positionals);
  for (const { file, reason } of skipped) cli.err(`hermes: skipped ${file}: ${reason}`);
  for (const file of files) {
    const verdict = await validateJob({ path: file }, scope, {
      deep: values.deep === true,
      signal: cli.signal,
    });
    for (const line of verdict.warnings ?? []) cli.err(`hermes: warning: ${line}`);
    results.push(
      verdict.valid
        ? { file, valid: true, job: verdict.name }
        : { file, valid: false, error: verdict.error, errors: verdict.errors },
    );
  }
  if (values.json) await cli.out(JSON.stringify(results) + "\n");
  else {
    for (const r of results) {
      if (r.valid) await cli.out(`${r.file}: ok (${r.job})\n`);
      else for (const line of r.errors ?? []) cli.err(`hermes: ${line}`);
    }
  }
  return results.every((r) => r.valid) ? 0 : 2;
}

/** Keys only a job file has at its top level (with `name:`). */
const JOB_KEYS = /^(prompt|steps|schedule|model|tools|plugins|mcp_servers)\s*:/m;
const MODELINE = /^#\s*yaml-language-server:\s*\$schema=\S*job\.schema\.json/m;

/** Whether the text of a YAML file is a job file (see the module comment); the reason when it is not. */
export function notAJob(text: string): string | null {
  if (MODELINE.test(text)) return null;
  if (/^name\s*:/m.test(text) && JOB_KEYS.test(text)) return null;
  return "not a job file (no top-level name: with prompt:, steps:, schedule:, model: or tools:, and no " +
    "job.schema.json modeline)";
}

/** Files as given; a directory stands for the job files in it, the other YAML files are skipped. */
function jobFiles(
  paths: readonly string[],
): { files: string[]; skipped: { file: string; reason: string }[] } {
  const files: string[] = [];
  const skipped: { file: string; reason: string }[] = [];
  for (const path of paths) {
    let isDirectory = false;
    try {
      isDirectory = Deno.statSync(path).isDirectory;
    } catch { /* a missing file is reported by loadJob, with its name */ }
    if (!isDirectory) {
      files.push(path);
      continue;
    }
    const yaml = [...Deno.readDirSync(path)]
      .filter((e) => e.isFile && /\.ya?ml$/.test(e.name))
      .map((e) => `${path.replace(/\/$/, "")}/${e.name}`)
      .sort();
    const inside: string[] = [];
    for (const file of yaml) {
      let reason: string | null;
      try {
        reason = notAJob(Deno.readTextFileSync(file));
      } catch (error) {
        reason = `cannot be read: ${error instanceof Error ? error.message : String(error)}`;
      }
      if (reason === null) inside.push(file);
      else skipped.push({ file, reason });
    }
    if (inside.length === 0) {
      throw new ValidationError(
        `Cannot validate directory "${path}": it holds no job files (*.yaml with name: and prompt:, steps:, schedule:, model: or tools:)`,
      );
    }
    files.push(...inside);
  }
  return { files, skipped };
}
