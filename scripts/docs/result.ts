/** The result object's fields, from its published JSON Schema (schemas/result.schema.json). */
import { code, table } from "./markdown.ts";
import { keyRows, type Schema } from "./json_schema.ts";

export async function resultMarkdown(root: string): Promise<string> {
  const schema = JSON.parse(await Deno.readTextFile(`${root}/schemas/result.schema.json`)) as Schema;
  const rows = keyRows(schema, "", (schema.$defs ?? {}) as Schema);
  return table(
    ["field", "type", "always", "meaning"],
    rows.map((row) => [code(row.path), row.type, row.required ? "yes" : "no", row.description]),
  );
}

/** The top-level field names, for the docs test. */
export async function resultFields(root: string): Promise<string[]> {
  const schema = JSON.parse(await Deno.readTextFile(`${root}/schemas/result.schema.json`)) as Schema;
  return Object.keys((schema.properties ?? {}) as Schema);
}
