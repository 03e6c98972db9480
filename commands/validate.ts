/**
 * `hermes validate JOB.yaml|DIR...`: everything `run` or `daemon` would refuse, without a model call; every
 * problem of a file, one `file:line:col: key.path: …` line each. Exit 0 when every file is valid, else 2.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { loadJob, loadUserConfig } from "../runtime/config/job_file.ts";
import { JobProblems } from "../runtime/config/job_checks.ts";

interface FileResult {
  file: string;
  valid: boolean;
  job?: string;
  error?: string;
  errors?: readonly string[];
}

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("validate", cli.args, { json: { type: "boolean" } });
  if (positionals.length === 0) {
    throw new ValidationError("hermes validate: expected at least one JOB.yaml or DIR");
  }
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  const results: FileResult[] = [];
  for (const file of jobFiles(positionals)) {
    try {
      const job = loadJob(file, { validateOnly: true, ...(config ? { config } : {}) });
      results.push({ file, valid: true, job: job.spec.name });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      const errors = error instanceof JobProblems ? error.problems : [error.message];
      results.push({ file, valid: false, error: errors[0]!, errors });
    }
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

/** Files as given; a directory stands for its *.yaml / *.yml job files (not replies files or config.yaml). */
function jobFiles(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    let isDirectory = false;
    try {
      isDirectory = Deno.statSync(path).isDirectory;
    } catch { /* a missing file is reported by loadJob, with its name */ }
    if (!isDirectory) {
      files.push(path);
      continue;
    }
    const inside = [...Deno.readDirSync(path)]
      .filter((e) => e.isFile && /\.ya?ml$/.test(e.name) && !/\.replies\.ya?ml$/.test(e.name))
      .filter((e) => !/^config\.ya?ml$/.test(e.name))
      .map((e) => `${path.replace(/\/$/, "")}/${e.name}`)
      .sort();
    if (inside.length === 0) {
      throw new ValidationError(`hermes validate: no *.yaml job files in directory "${path}"`);
    }
    files.push(...inside);
  }
  return files;
}
