/** `output.schema`: ask for JSON, validate the final answer, allow one repair turn (DESIGN §4). */
import { z } from "zod";

export function schemaInstruction(schema: Record<string, unknown>): string {
  return `When you give your final answer, reply with only a JSON value (no prose, no code fences) that matches this JSON Schema:\n${
    JSON.stringify(schema)
  }`;
}

export type SchemaCheck = { ok: true; value: unknown } | { ok: false; error: string };

export function checkAgainstSchema(text: string, schema: Record<string, unknown>): SchemaCheck {
  const stripped = text.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1").trim();
  let value: unknown;
  try {
    value = JSON.parse(stripped);
  } catch (error) {
    return { ok: false, error: `the answer is not JSON (${(error as Error).message})` };
  }
  const result = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(value);
  if (result.success) return { ok: true, value };
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String).join(".") || "(root)";
  return { ok: false, error: `${path}: ${issue.message}` };
}

export function repairPrompt(error: string): string {
  return `Your answer did not match the required JSON Schema: ${error}. Reply again with only the corrected JSON.`;
}
