import assert from "node:assert/strict";
import { isStrictSchema } from "./strict_schema.ts";

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});

Deno.test("isStrictSchema: objects closed and fully required, supported keywords only, nested and via $defs", () => {
  assert.equal(isStrictSchema(object({ a: { type: "string" } })), true);
  assert.equal(
    isStrictSchema(object({
      when: { type: "string", format: "date-time" },
      n: { type: ["integer", "null"], minimum: 0 },
      tags: { type: "array", items: object({ k: { enum: ["x", "y"] } }), maxItems: 5 },
      any: { anyOf: [{ type: "string" }, { $ref: "#/$defs/node" }] },
    }, { $defs: { node: object({ v: { type: "number" } }) } })),
    true,
  );
});

Deno.test("isStrictSchema: what OpenAI's strict mode refuses makes it non-strict", () => {
  assert.equal(isStrictSchema({ type: "array", items: { type: "string" } }), false, "root not an object");
  assert.equal(
    isStrictSchema({ ...object({ a: { type: "string" } }), required: [] }),
    false,
    "optional property",
  );
  const { additionalProperties: _, ...open } = object({ a: { type: "string" } });
  assert.equal(isStrictSchema(open), false, "additionalProperties not false");
  assert.equal(isStrictSchema(object({ a: { type: "string", minLength: 1 } })), false, "minLength");
  assert.equal(isStrictSchema(object({ a: { type: "string", format: "uri" } })), false, "unsupported format");
  assert.equal(isStrictSchema(object({ a: { oneOf: [{ type: "string" }] } })), false, "oneOf");
  assert.equal(
    isStrictSchema(object({ a: object({ b: { type: "string" } }, { required: [] }) })),
    false,
    "nested",
  );
  let deep: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 10; i++) deep = object({ d: deep });
  assert.equal(isStrictSchema(deep), false, "more than 10 levels");
});
