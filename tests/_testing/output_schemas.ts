/**
 * The published output schemas (schemas/*.schema.json, as committed) compiled with ajv, for tests that check
 * real output against them. A failure names the event type and ajv's errors for that type's definition.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { ROOT } from "./cli.ts";

export interface OutputSchemas {
  /** Problems of one event (stream-json line, RPC notification params); empty when it matches. */
  event(value: unknown): string[];
  /** Problems of one result object (`--output json`, RPC results); empty when it matches. */
  result(value: unknown): string[];
  /** Event types in the published schema. */
  types: string[];
}

export async function outputSchemas(): Promise<OutputSchemas> {
  const read = async (name: string) => JSON.parse(await Deno.readTextFile(`${ROOT}/schemas/${name}`));
  const events = await read("events.schema.json");
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats.default(ajv);
  ajv.addSchema(events, "events");
  const anyEvent = ajv.getSchema("events")!;
  const result = ajv.compile(await read("result.schema.json"));
  const types = Object.keys(events.$defs);
  const describe = (errors: typeof result.errors) =>
    (errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message} ${JSON.stringify(e.params)}`);
  return {
    types,
    event(value) {
      if (anyEvent(value)) return [];
      const type = (value as { type?: unknown })?.type;
      if (typeof type !== "string" || !types.includes(type)) {
        return [`unknown event type ${JSON.stringify(type)}`];
      }
      const one = ajv.getSchema(`events#/$defs/${type}`)!;
      one(value);
      return describe(one.errors).map((line) => `${type}: ${line}`);
    },
    result(value) {
      return result(value) ? [] : describe(result.errors);
    },
  };
}
