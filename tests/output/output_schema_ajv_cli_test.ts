/**
 * `output.schema` is JSON Schema draft 2020-12 in full (ajv, with formats): `if`/`then`/`else`, `not`,
 * `dependentRequired`, `unevaluatedProperties` and `format` are accepted by `hermes validate` and enforced by
 * `hermes run` — an answer that meets the schema succeeds, one that misses it gets the repair turn and then
 * fails with schema_mismatch. A schema ajv refuses is one `file:line:col` line, exit 2, before any model call.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient } from "../_testing/rpc_client.ts";

interface Case {
  schema: string;
  meets: unknown;
  misses: unknown;
  /** What the failed run's error says about the answer that missed. */
  why: RegExp;
}

const CASES: Record<string, Case> = {
  "if/then/else": {
    schema: `
    type: object
    required: [kind]
    properties: { kind: { enum: [bug, feature] } }
    if: { properties: { kind: { const: bug } } }
    then: { required: [severity] }
    else: { not: { required: [severity] } }`,
    meets: { kind: "bug", severity: "high" },
    misses: { kind: "bug" },
    why: /must have required property 'severity'/,
  },
  not: {
    schema: `
    type: object
    properties:
      labels: { type: array, items: { type: string }, not: { contains: { const: wontfix } } }`,
    meets: { labels: ["bug"] },
    misses: { labels: ["bug", "wontfix"] },
    why: /labels: must NOT be valid/,
  },
  dependentRequired: {
    schema: `
    type: object
    dependentRequired: { assignee: [team] }`,
    meets: { assignee: "ada", team: "core" },
    misses: { assignee: "ada" },
    why: /must have property team when property assignee is present/,
  },
  unevaluatedProperties: {
    schema: `
    type: object
    allOf: [{ properties: { title: { type: string } } }]
    properties: { priority: { type: integer } }
    unevaluatedProperties: false`,
    meets: { title: "Crash on start", priority: 1 },
    misses: { title: "Crash on start", priority: 1, extra: true },
    why: /must NOT have unevaluated properties \("extra"\)/,
  },
  format: {
    schema: `
    type: object
    required: [due]
    properties: { due: { type: string, format: date-time } }`,
    meets: { due: "2026-12-02T09:00:00Z" },
    misses: { due: "next tuesday" },
    why: /due: must match format "date-time"/,
  },
};

const job = (schema: string) =>
  `name: structured\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: triage it\n` +
  `output:\n  schema:${schema}\n`;
const reply = (value: unknown) => `- content: '${JSON.stringify(value)}'\n`;

for (const [keyword, c] of Object.entries(CASES)) {
  Deno.test(`output.schema with ${keyword}: validate accepts it; run enforces it both ways`, async () => {
    const dir = await writeFiles(await tempDir(), {
      "meets/job.yaml": job(c.schema),
      "meets/r.yaml": reply(c.meets),
      "misses/job.yaml": job(c.schema),
      "misses/r.yaml": reply(c.misses) + reply(c.misses),
      "repaired/job.yaml": job(c.schema),
      // The second reply answers only the repair prompt, which names what was wrong.
      "repaired/r.yaml": reply(c.misses) +
        `- match: "Your answer did not match the required JSON Schema"\n  content: '${
          JSON.stringify(c.meets)
        }'\n`,
    });
    const validated = await hermes(["validate", "meets/job.yaml"], { cwd: dir });
    assert.equal(validated.code, 0, validated.stderr);
    assert.match(validated.stdout, /meets\/job\.yaml: ok \(structured\)/);

    const run = (name: string) =>
      hermes(["run", `${name}/job.yaml`, "--output", "json"], { cwd: dir, home: `${dir}/${name}` });
    const [meets, misses, repaired] = await Promise.all([run("meets"), run("misses"), run("repaired")]);

    assert.equal(meets.code, 0, meets.stderr);
    const met = JSON.parse(meets.stdout);
    assert.deepEqual([met.status, met.turns, met.output], ["success", 1, c.meets]);

    assert.equal(misses.code, 1, misses.stderr);
    const missed = JSON.parse(misses.stdout);
    assert.deepEqual([missed.status, missed.terminal_reason, missed.turns], ["failed", "schema_mismatch", 2]);
    assert.equal(missed.output, null);
    assert.match(missed.error, /^The final answer does not match output\.schema: /);
    assert.match(missed.error, c.why);

    assert.equal(repaired.code, 0, repaired.stderr);
    const fixed = JSON.parse(repaired.stdout);
    assert.deepEqual([fixed.status, fixed.turns, fixed.output], ["success", 2, c.meets]);
    assert.match(repaired.stderr, c.why, "the warning names what the first answer missed");
  });
}

const MODEL = "model: { provider: scripted, script: ./r.yaml }";
const INVALID: Record<string, { schema: string; error: RegExp }> = {
  "type.yaml": {
    schema: "\n    type: objec",
    error:
      /^type\.yaml:6:11: output\.schema\.type: not a usable JSON Schema: must be equal to one of the allowed values \("array", /,
  },
  "format.yaml": {
    schema: "\n    properties:\n      due: { type: string, format: dat-time }",
    error:
      /^format\.yaml:7:36: output\.schema\.properties\.due\.format: not a usable JSON Schema: unknown format "dat-time"/,
  },
  "keyword.yaml": {
    schema: "\n    type: object\n    requried: [a]",
    error: /^keyword\.yaml:6:5: output\.schema: not a usable JSON Schema: unknown keyword: "requried"/,
  },
  "ref.yaml": {
    schema: '\n    $ref: "#/$defs/missing"',
    error:
      /^ref\.yaml:6:5: output\.schema: not a usable JSON Schema: can't resolve reference #\/\$defs\/missing/,
  },
  "not.yaml": {
    schema: "\n    not: 3",
    error: /^not\.yaml:6:10: output\.schema\.not: not a usable JSON Schema: must be object,boolean/,
  },
};

Deno.test("output.schema that ajv refuses: validate and run name file:line:col, exit 2", async () => {
  const files: Record<string, string> = { "r.yaml": "- content: never asked\n" };
  for (const [name, { schema }] of Object.entries(INVALID)) {
    files[name] = `name: bad\n${MODEL}\nprompt: x\noutput:\n  schema:${schema}\n`;
  }
  const dir = await writeFiles(await tempDir(), files);
  await Promise.all(
    Object.entries(INVALID).map(async ([name, { error }]) => {
      const validated = await hermes(["validate", name], { cwd: dir });
      assert.equal(validated.code, 2, name);
      const lines = validated.stderr.trim().split("\n");
      assert.equal(lines.length, 1, validated.stderr);
      assert.match(lines[0]!.replace(/^hermes: /, ""), error, name);
      const ran = await hermes(["run", name, "--output", "json"], { cwd: dir, home: `${dir}/${name}.home` });
      assert.equal(ran.code, 2, name);
      const result = JSON.parse(ran.stdout);
      // run compiles the schema while the model works: the session has started, and its first answer is not
      // checked against a schema that does not compile (nor repaired).
      assert.deepEqual(
        [result.status, result.terminal_reason, result.turns],
        ["failed", "invalid_input", 1],
        name,
      );
      assert.match(result.session_id, /\S/, name);
      assert.match(result.error, error, name);
      assert.doesNotMatch(ran.stderr, /at .*\.ts:\d+|internal error/i, `${name}: no stack trace`);
    }),
  );
});

Deno.test("rpc job.validate: a 2020-12 output.schema is valid; one ajv refuses is invalid with its position", async () => {
  const dir = await writeFiles(await tempDir(), {
    "good.yaml": job(CASES["if/then/else"]!.schema),
    "bad.yaml": `name: bad\n${MODEL}\nprompt: x\noutput:\n  schema:${INVALID["type.yaml"]!.schema}\n`,
    "r.yaml": "- content: never asked\n",
  });
  await using client = new RpcClient({ home: dir, cwd: dir });
  const good = await client.request("job.validate", { path: "good.yaml" });
  assert.deepEqual(good.result, { valid: true, name: "structured" });
  const bad = await client.request("job.validate", { path: "bad.yaml" });
  const result = bad.result as { valid: boolean; error: string };
  assert.equal(result.valid, false);
  assert.match(result.error, /bad\.yaml:6:11: output\.schema\.type: not a usable JSON Schema/);
  const inline = await client.request("job.validate", {
    job: { name: "inline", prompt: "x", output: { schema: { type: "object", not: { required: ["a"] } } } },
  });
  assert.deepEqual(inline.result, { valid: true, name: "inline" });
  const { code } = await client.finish();
  assert.equal(code, 0);
});
