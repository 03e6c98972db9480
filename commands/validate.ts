/** `hermes validate JOB.yaml...`: validate only; exit 0 when every file is valid, else 2. */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { loadJob, loadUserConfig } from "../runtime/config/job_file.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("validate", cli.args, { json: { type: "boolean" } });
  if (positionals.length === 0) throw new ValidationError("hermes validate: expected at least one JOB.yaml");
  const config = loadUserConfig(`${cli.home}/config.yaml`);
  const results: { file: string; valid: boolean; job?: string; error?: string }[] = [];
  for (const file of positionals) {
    try {
      const job = loadJob(file, { validateOnly: true, ...(config ? { config } : {}) });
      results.push({ file, valid: true, job: job.spec.name });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      results.push({ file, valid: false, error: error.message });
    }
  }
  if (values.json) await cli.out(JSON.stringify(results) + "\n");
  else {
    for (const r of results) {
      if (r.valid) await cli.out(`${r.file}: ok (${r.job})\n`);
      else cli.err(`hermes: ${r.error}`);
    }
  }
  return results.every((r) => r.valid) ? 0 : 2;
}
