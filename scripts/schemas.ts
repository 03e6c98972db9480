/**
 * `deno task schemas`: writes the published JSON Schemas from their definitions — job.schema.json (job
 * files), schemas/result.schema.json and schemas/events.schema.json (the machine-readable output),
 * schemas/cassette.schema.json (recorded runs). Tests
 * fail when a committed file differs from what `hermes schema …` prints.
 */
import { jobJsonSchema } from "../runtime/config/job_schema.ts";
import { eventsJsonSchema, resultJsonSchema } from "../runtime/core/event_schema.ts";
import { schemaText } from "../commands/schema.ts";
import { cassetteJsonSchema } from "../runtime/cassette/schema.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const files: Record<string, Record<string, unknown>> = {
  "job.schema.json": jobJsonSchema(),
  "schemas/result.schema.json": resultJsonSchema(),
  "schemas/events.schema.json": eventsJsonSchema(),
  "schemas/cassette.schema.json": cassetteJsonSchema(),
};
await Deno.mkdir(`${ROOT}/schemas`, { recursive: true });
for (const [path, schema] of Object.entries(files)) {
  await Deno.writeTextFile(`${ROOT}/${path}`, schemaText(schema));
  console.error(`wrote ${path}`);
}
