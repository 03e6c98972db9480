/**
 * `output.schema`: ask for JSON, validate the final answer, allow one repair turn (docs/result.md). The check
 * itself (ajv, tens of ms to import and compile) is output_check.ts, loaded only by jobs that have a schema.
 */

export function schemaInstruction(schema: Record<string, unknown>): string {
  return `When you give your final answer, reply with only a JSON value (no prose, no code fences) that matches this JSON Schema:\n${
    JSON.stringify(schema)
  }`;
}

export type SchemaCheck = { ok: true; value: unknown } | { ok: false; error: string };

export function repairPrompt(error: string): string {
  return `Your answer did not match the required JSON Schema: ${error}. Reply again with only the corrected JSON.`;
}
