/** Checks a final answer against `output.schema` (JSON Schema → zod). Import lazily: it loads zod. */
import { compileJsonSchema } from "../config/job_checks.ts";
import type { SchemaCheck } from "./output_schema.ts";

export function checkAgainstSchema(text: string, schema: Record<string, unknown>): SchemaCheck {
  const stripped = text.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1").trim();
  let value: unknown;
  try {
    value = JSON.parse(stripped);
  } catch (error) {
    return { ok: false, error: `the answer is not JSON (${(error as Error).message})` };
  }
  const result = compileJsonSchema(schema).safeParse(value);
  if (result.success) return { ok: true, value };
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String).join(".") || "(root)";
  return { ok: false, error: `${path}: ${issue.message}` };
}
