/**
 * `output.schema`: ask for JSON, validate the final answer, allow one repair turn (docs/result.md). The
 * schema is compiled (ajv, tens of ms to import and compile) by config/output_schema_check.ts, loaded only by
 * jobs that have a schema, while the model works (turn.ts).
 */
import type { JsonSchemaCheck } from "../config/json_schema.ts";

export function schemaInstruction(schema: Record<string, unknown>): string {
  return `When you give your final answer, reply with only a JSON value (no prose, no code fences) that matches this JSON Schema:\n${
    JSON.stringify(schema)
  }`;
}

export type SchemaCheck = { ok: true; value: unknown } | { ok: false; error: string };

export function repairPrompt(error: string): string {
  return `Your answer did not match the required JSON Schema: ${error}. Reply again with only the corrected JSON.`;
}

/** A final answer (JSON, optionally in a code fence) checked with the compiled `output.schema`. */
export function checkAgainstSchema(text: string, check: JsonSchemaCheck): SchemaCheck {
  const stripped = text.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1").trim();
  let value: unknown;
  try {
    value = JSON.parse(stripped);
  } catch (error) {
    return { ok: false, error: `the answer is not JSON (${(error as Error).message})` };
  }
  const problem = check(value);
  return problem === null ? { ok: true, value } : { ok: false, error: problem };
}
