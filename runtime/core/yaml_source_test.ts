import assert from "node:assert/strict";
import { ValidationError } from "./errors.ts";
import { parseYamlSource } from "./yaml_source.ts";

function refusal(text: string): string {
  try {
    parseYamlSource("job.yaml", text);
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return error.message;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be refused`);
}

Deno.test("yaml source: a syntax error names its real line and column", () => {
  assert.equal(
    refusal("name: x\nprompt: hi\nsteps: [a, b\n"),
    "job.yaml:4:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]",
  );
  assert.match(refusal("name: x\na: b\n  c: d: e\n"), /^job\.yaml:2:4: invalid YAML: Nested mappings/);
  assert.match(refusal("name: x\nname: y\n"), /^job\.yaml:2:1: invalid YAML: Map keys must be unique/);
});

Deno.test("yaml source: an unresolved alias is located and named", () => {
  assert.equal(
    refusal("name: x\nprompt: *greeting\n"),
    "job.yaml:2:9: invalid YAML: alias *greeting has no anchor &greeting before it",
  );
});

Deno.test("yaml source: an alias bomb is refused at its first alias, without expanding it", () => {
  const rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (const [name, prev] of [["b", "a"], ["c", "b"], ["d", "c"], ["e", "d"], ["f", "e"]]) {
    rows.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(", ")}]`);
  }
  assert.match(
    refusal(`name: bomb\n${rows.join("\n")}\n`),
    /^job\.yaml:3:8: invalid YAML: aliases expand to more than 100 nodes/,
  );
});

Deno.test("yaml source: anchors and a few aliases still work", () => {
  const { value } = parseYamlSource("job.yaml", "base: &b {x: 1}\none: *b\ntwo: *b\n");
  assert.deepEqual(value, { base: { x: 1 }, one: { x: 1 }, two: { x: 1 } });
});
