import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { hermes, ROOT } from "../../tests/_testing/cli.ts";
import { jobJsonSchema } from "./job_schema.ts";

/** Paths of every property in `schema` (walking objects, arrays, unions and records) without a description. */
function undescribed(schema: unknown, path = ""): string[] {
  if (!schema || typeof schema !== "object") return [];
  const node = schema as Record<string, unknown>;
  const missing: string[] = [];
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, unknown>)) {
    const at = path ? `${path}.${key}` : key;
    if (typeof (child as { description?: unknown }).description !== "string") missing.push(at);
    missing.push(...undescribed(child, at));
  }
  for (const key of ["items", "additionalProperties"]) missing.push(...undescribed(node[key], `${path}[]`));
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    for (const option of (node[key] ?? []) as unknown[]) missing.push(...undescribed(option, path));
  }
  return missing;
}

Deno.test("job schema: every key has a description (editor hover)", () => {
  assert.deepEqual(undescribed(jobJsonSchema()), []);
});

// `type: [string, number]` is standard JSON Schema; strict mode wants it acknowledged.
Deno.test("job schema: compiles under ajv strict mode and judges a job like the loader", () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats.default(ajv);
  const validate = ajv.compile(jobJsonSchema());
  assert.equal(validate({ name: "ok", prompt: "hi", tools: { shell: { allow: ["git *"] } } }), true);
  assert.equal(validate({ name: "ok", tools: { shel: {} } }), false);
  assert.equal(validate({ name: "Bad Name" }), false);
});

Deno.test("job schema: job.schema.json at the repository root is what `hermes schema` prints", async () => {
  const printed = await hermes(["schema"]);
  assert.equal(printed.code, 0, printed.stderr);
  const committed = await Deno.readTextFile(`${ROOT}/job.schema.json`);
  assert.equal(
    committed,
    printed.stdout,
    "job.schema.json is stale: run `deno task hermes schema > job.schema.json`",
  );
});

Deno.test("job schema: the examples' modelines point at the committed job.schema.json", async () => {
  for await (const entry of Deno.readDir(`${ROOT}/examples`)) {
    if (!entry.name.endsWith(".yaml") || entry.name.endsWith(".replies.yaml")) continue;
    const first = (await Deno.readTextFile(`${ROOT}/examples/${entry.name}`)).split("\n")[0];
    assert.equal(first, "# yaml-language-server: $schema=../job.schema.json", entry.name);
  }
});
