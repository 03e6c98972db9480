/** User-supplied JSON Schemas (plugin tool parameters, plugin config_schema), checked with zod. */
import { z } from "zod";

/** Returns null when `value` matches, else `path: what was expected`. */
export type SchemaCheck = (value: unknown) => string | null;

/** Compiles `schema`; throws an Error (naming what is unsupported) when zod cannot read it. */
export function compileJsonSchema(schema: Record<string, unknown>): SchemaCheck {
  const parser = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  return (value) => {
    const result = parser.safeParse(value);
    if (result.success) return null;
    const issue = result.error.issues[0]!;
    return `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`;
  };
}
