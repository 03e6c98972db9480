import assert from "node:assert/strict";
import { productionImports } from "../../tests/_testing/layers.ts";
import { ROOT } from "../../tests/_testing/cli.ts";
import { compileJsonSchema, JsonSchemaError } from "./json_schema.ts";

Deno.test("compileJsonSchema: 2020-12 keywords check values; the first problem names its path", () => {
  const check = compileJsonSchema({
    type: "object",
    properties: { items: { type: "array", items: { type: "object", dependentRequired: { a: ["b"] } } } },
    unevaluatedProperties: false,
  });
  assert.equal(check({ items: [{ a: 1, b: 2 }] }), null);
  assert.equal(check({ items: [{ a: 1 }] }), "items.0: must have property b when property a is present");
  assert.equal(check({ items: [], more: 1 }), '(root): must NOT have unevaluated properties ("more")');
});

Deno.test("compileJsonSchema: a refused schema names the key inside it that is wrong", () => {
  const refused = (schema: Record<string, unknown>) => {
    try {
      compileJsonSchema(schema);
    } catch (error) {
      assert.ok(error instanceof JsonSchemaError);
      return { at: error.at, message: error.message };
    }
    assert.fail("compiled");
  };
  assert.deepEqual(refused({ properties: { "a/b": { minimum: "1" } } }), {
    at: ["properties", "a/b", "minimum"],
    message: "must be number",
  });
  assert.deepEqual(refused({ properties: { when: { format: "dat" } } }).at, ["properties", "when", "format"]);
  assert.deepEqual(refused({ requried: ["a"] }), { at: [], message: 'unknown keyword: "requried"' });
});

Deno.test("ajv loads only for jobs with output.schema: json_schema.ts is imported with import() or for types", async () => {
  const edges = await productionImports(ROOT);
  const text = async (path: string) => await Deno.readTextFile(`${ROOT}/${path}`);
  const staticImporters = [];
  for (const edge of edges.filter((e) => e.to === "runtime/config/json_schema.ts")) {
    const line = (await text(edge.from)).split("\n")[edge.line - 1]!;
    if (!/import\(\s*"|^import type /.test(line)) staticImporters.push(`${edge.from}:${edge.line}`);
  }
  assert.deepEqual(staticImporters, []);
  const ajvUsers = [];
  for (const edge of new Set(edges.flatMap((e) => [e.from, e.to]))) {
    if (/from "ajv/.test(await text(edge))) ajvUsers.push(edge);
  }
  // scripts/config_validators.ts runs at build time: it generates runtime/config/_generated/ with ajv.
  assert.deepEqual(ajvUsers.sort(), ["runtime/config/json_schema.ts", "scripts/config_validators.ts"]);
});
