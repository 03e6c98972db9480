/**
 * Whether a job's `output.schema` compiles, one located problem when it does not. The compiler (ajv,
 * json_schema.ts) is loaded only for jobs that have an `output.schema`: `validate` and RPC `job.validate`
 * load it and pass it to loadJob, so the problem is listed with the file's others; a session's opening
 * checks with outputSchemaProblems before any model call.
 */
import type { JobFile } from "./job_schema.ts";
import { keyPath } from "../core/key_path.ts";

/** Throws when `schema` does not compile; an error's `at` names the key inside the schema that is wrong. */
export type SchemaCompiler = (schema: Record<string, unknown>) => unknown;

type Locate = (keyPath: (string | number)[]) => string;

/** `file:line:col: output.schema…: not a usable JSON Schema: …`, or null when it compiles (or is absent). */
export function outputSchemaProblem(spec: JobFile, compile: SchemaCompiler, locate: Locate): string | null {
  const schema = spec.output?.schema;
  if (!schema) return null;
  try {
    compile(schema);
    return null;
  } catch (error) {
    const at = (error as { at?: unknown }).at;
    const path = ["output", "schema", ...(Array.isArray(at) ? at : [])];
    return `${locate(path)}: ${keyPath(path)}: not a usable JSON Schema: ${(error as Error).message}`;
  }
}

/** outputSchemaProblem with ajv, imported only when the job has an `output.schema`. */
export async function outputSchemaProblems(spec: JobFile, locate: Locate): Promise<string[]> {
  if (!spec.output?.schema) return [];
  const { compileJsonSchema } = await import("./json_schema.ts");
  const problem = outputSchemaProblem(spec, compileJsonSchema, locate);
  return problem === null ? [] : [problem];
}
