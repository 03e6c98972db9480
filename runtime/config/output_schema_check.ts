/**
 * Whether a job's `output.schema` compiles, one located problem when it does not. The compiler (ajv,
 * json_schema.ts) is loaded only for jobs that have an `output.schema`: `validate` and RPC `job.validate`
 * load it and pass it to loadJob, so the problem is listed with the file's others; a turn that checks an
 * answer compiles it with compileOutputSchema while the model works (session/turn.ts).
 */
import type { JobFile } from "./job_schema.ts";
import type { JsonSchemaCheck } from "./json_schema.ts";
import { keyPath } from "../core/key_path.ts";
import { ValidationError } from "../core/errors.ts";

/** Throws when `schema` does not compile; an error's `at` names the key inside the schema that is wrong. */
export type SchemaCompiler = (schema: Record<string, unknown>) => unknown;

type Locate = (keyPath: (string | number)[]) => string;

/** `file:line:col: output.schema…: not a usable JSON Schema: …`, or null when it compiles (or is absent). */
export function outputSchemaProblem(spec: JobFile, compile: SchemaCompiler, locate: Locate): string | null {
  const schema = spec.output?.schema;
  if (!schema) return null;
  return schemaProblem(schema, compile, locate);
}

function schemaProblem(
  schema: Record<string, unknown>,
  compile: SchemaCompiler,
  locate: Locate,
): string | null {
  try {
    compile(schema);
    return null;
  } catch (error) {
    const at = (error as { at?: unknown }).at;
    const path = ["output", "schema", ...(Array.isArray(at) ? at : [])];
    return `${locate(path)}: ${keyPath(path)}: not a usable JSON Schema: ${(error as Error).message}`;
  }
}

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
