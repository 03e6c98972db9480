/**
 * `hermes schema [job|result|events|cassette|openapi]`: a JSON Schema on stdout (`openapi`: the HTTP API's
 * OpenAPI 3.1 document). `job` (the default) describes job files;
 * `result` and `events` describe the machine-readable output (`--output json|stream-json`, RPC); `cassette`
 * a recorded run (`--record`, `hermes replay`).
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";

const SCHEMAS = {
  job: async () => (await import("../runtime/config/job_schema.ts")).jobJsonSchema(),
  result: async () => (await import("../runtime/core/event_schema.ts")).resultJsonSchema(),
  events: async () => (await import("../runtime/core/event_schema.ts")).eventsJsonSchema(),
  cassette: async () => (await import("../runtime/cassette/schema.ts")).cassetteJsonSchema(),
  openapi: async () => {
    const { VERSION } = await import("../runtime/core/version.ts");
    return (await import("../runtime/http/openapi.ts")).openApiDocument(VERSION);
  },
};

export async function main(cli: Cli): Promise<number> {
  const { positionals } = parseCommandArgs("schema", cli.args);
  const name = positionals[0] ?? "job";
  if (positionals.length > 1 || !Object.hasOwn(SCHEMAS, name)) {
    throw new ValidationError(
      `hermes schema: unknown schema "${
        positionals.join(" ")
      }": expected job (the default), result, events, cassette or openapi`,
    );
  }
  await cli.out(schemaText(await SCHEMAS[name as keyof typeof SCHEMAS]()));
  return 0;
}

/** The text `hermes schema` prints and `schemas/*.schema.json` hold. */
export function schemaText(schema: Record<string, unknown>): string {
  return JSON.stringify(schema, null, 2) + "\n";
}
