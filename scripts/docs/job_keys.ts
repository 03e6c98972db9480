/** The job-file and config.yaml key reference, from the zod schema's JSON Schema and its `.describe()` texts. */
import { z } from "zod";
import { jobJsonSchema, UserConfig } from "../../runtime/config/job_schema.ts";
import { code, table } from "./markdown.ts";
import { type KeyRow, keyRows, type Schema } from "./json_schema.ts";

export function jobKeyRows(): KeyRow[] {
  return keyRows(jobJsonSchema()).filter((row) => row.path !== "$schema");
}

/** One table of the top-level keys, then one per key that has keys of its own. */
export function jobKeysMarkdown(): string {
  const rows = jobKeyRows();
  const top = rows.filter((row) => !row.path.includes(".") && !row.path.includes("["));
  const parts = [keyTable(top)];
  for (const key of top) {
    const below = rows.filter((row) =>
      row.path.startsWith(`${key.path}.`) || row.path.startsWith(`${key.path}[]`)
    );
    if (below.length === 0) continue;
    parts.push(`### \`${key.path}\``, key.description, keyTable(below));
  }
  return parts.join("\n\n");
}

/** The keys config.yaml has beyond a job file's (its other keys mean what they mean in a job). */
export function configKeysMarkdown(): string {
  const jobPaths = new Set(jobKeyRows().map((row) => row.path));
  const schema = z.toJSONSchema(UserConfig, { target: "draft-2020-12", io: "input" }) as Schema;
  const own = keyRows(schema).filter((row) => !jobPaths.has(row.path) && row.path !== "$schema");
  return keyTable(own);
}

/** Defaults are part of the descriptions ("(default 60s)"): zod's schema does not carry them. */
function keyTable(rows: readonly KeyRow[]): string {
  return table(
    ["key", "type", "meaning"],
    rows.map((row) => [code(row.path) + (row.required ? " (required)" : ""), row.type, row.description]),
  );
}
