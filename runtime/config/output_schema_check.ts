/**
 * A job's `output.schema` compiled for the turn that checks an answer, while the model works
 * (session/turn.ts imports this module then, not before the first request). The compiler (ajv,
 * json_schema.ts) is loaded only for jobs that have an `output.schema`; `validate` and RPC `job.validate`
 * load it and pass it to loadJob, whose checks (job_checks.ts) list its problem with the file's others.
 */
import type { JsonSchemaCheck } from "./json_schema.ts";
import { type Locate, schemaProblem } from "./job_checks.ts";
import { ValidationError } from "../core/errors.ts";

/**
 * The job's `output.schema` compiled with ajv (imported now), or a ValidationError with the located problem
 * (`file:line:col: output.schema…: not a usable JSON Schema: …`).
 */
export async function compileOutputSchema(
  schema: Record<string, unknown>,
  locate: Locate,
): Promise<JsonSchemaCheck> {
  const { compileJsonSchema } = await import("./json_schema.ts");
  let check: JsonSchemaCheck | undefined;
  const problem = schemaProblem(schema, (s) => check = compileJsonSchema(s), locate);
  if (problem !== null) throw new ValidationError(problem);
  return check!;
}
