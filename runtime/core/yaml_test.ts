import assert from "node:assert/strict";
import * as npmYaml from "yaml";
import * as yaml from "./yaml.ts";
import { isCurrent, NPM_MODULES } from "../../scripts/npm_modules.ts";

Deno.test("runtime/core/_generated/yaml.js was generated from the pinned npm:yaml", async () => {
  assert.ok(
    await isCurrent(NPM_MODULES.yaml),
    "runtime/core/_generated/yaml.js is stale: run `deno task generate`",
  );
});

Deno.test("the ES module build parses as the package's CommonJS entry does: values, errors, positions", () => {
  const documents = [
    "name: a\nlist: [1, 2.5, true, null, ~]\nmap: { k: v }\nblock: |\n  two\n  lines\n",
    "a: &x { b: 1 }\nc: *x\n",
    "a: 1\na: 2\n", // a duplicate key is an error with uniqueKeys
    "a: [1, 2\n", // unterminated flow sequence
    "x: *nowhere\n",
  ];
  for (const text of documents) {
    const parse = (lib: typeof npmYaml) => {
      const lines = new lib.LineCounter();
      const doc = lib.parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: 100 });
      } catch (error) {
        value = `throws: ${(error as Error).message}`;
      }
      return {
        value,
        errors: doc.errors.map((error) => ({ message: error.message, at: lines.linePos(error.pos[0]) })),
      };
    };
    assert.deepEqual(parse(yaml as unknown as typeof npmYaml), parse(npmYaml), text);
  }
  // The one difference: !!binary is a Uint8Array here, a Node Buffer (a Uint8Array too) in the CommonJS build.
  const binary = yaml.parse("d: !!binary aGk=\n").d;
  assert.ok(binary instanceof Uint8Array);
  assert.deepEqual([...binary], [...npmYaml.parse("d: !!binary aGk=\n").d]);
});
