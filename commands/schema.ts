/** `hermes schema`: the job-file JSON Schema on stdout. */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { jobJsonSchema } from "../runtime/config/job_schema.ts";

export async function main(cli: Cli): Promise<number> {
  parseCommandArgs("schema", cli.args);
  await cli.out(JSON.stringify(jobJsonSchema(), null, 2) + "\n");
  return 0;
}
