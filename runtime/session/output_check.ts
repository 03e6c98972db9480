/** Checks a final answer against `output.schema` with ajv. Import lazily: it loads ajv. */
import { compileJsonSchema } from "../config/json_schema.ts";
import type { SchemaCheck } from "./output_schema.ts";

export function checkAgainstSchema(text: string, schema: Record<string, unknown>): SchemaCheck {
  const stripped = text.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1").trim();
  let value: unknown;
  try {
    value = JSON.parse(stripped);
  } catch (error) {
    return { ok: false, error: `the answer is not JSON (${(error as Error).message})` };
  }
  // The schema compiled when the session opened (outputSchemaProblems): it compiles here too.
  const problem = compileJsonSchema(schema)(value);
  return problem === null ? { ok: true, value } : { ok: false, error: problem };
}
