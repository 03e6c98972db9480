import assert from "node:assert/strict";
import * as node from "node:util";
import { parseArgs } from "./_parse_args.ts";

const OPTIONS = {
  output: { type: "string", short: "o" },
  json: { type: "boolean", short: "j" },
  quiet: { type: "boolean", short: "q" },
  input: { type: "string", short: "i", multiple: true },
  tag: { type: "boolean", multiple: true },
  home: { type: "string" },
} as const;

/** Each argument form parseArgs tells apart, for the options above and for unknown ones. */
const ARGS = [
  "--output",
  "x",
  "-o",
  "-ox",
  "--output=v",
  "--output=",
  "--json",
  "--json=1",
  "-j",
  "-jq",
  "-jo",
  "-jov",
  "-qi",
  "--",
  "-",
  "--nope",
  "-z",
  "-jz",
  "pos",
  "-y-z",
  "--input",
  "-i=a",
  "--tag",
  "--home",
  "--=x",
  "---",
  "--__proto__",
];

function outcome(run: () => { values: object; positionals: string[] }) {
  try {
    const { values, positionals } = run();
    return { values: { ...values }, positionals };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

Deno.test("parseArgs: the values, positionals and error messages of node:util's strict parseArgs on every list of up to three arguments", () => {
  const lists: string[][] = [[]];
  for (const a of ARGS) {
    lists.push([a]);
    for (const b of ARGS) {
      lists.push([a, b]);
      for (const c of ARGS) lists.push([a, b, c]);
    }
  }
  for (const args of lists) {
    assert.deepEqual(
      outcome(() => parseArgs(args, OPTIONS)),
      outcome(() => node.parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true })),
      JSON.stringify(args),
    );
  }
});

Deno.test("parseArgs: repeated options collect in order, the last single value wins, `--` ends the options", () => {
  const { values, positionals } = parseArgs(
    ["-i", "a=1", "--input=b=2", "--output", "one", "-otwo", "job.yaml", "--", "--json"],
    OPTIONS,
  );
  assert.deepEqual({ ...values }, { input: ["a=1", "b=2"], output: "two" });
  assert.deepEqual(positionals, ["job.yaml", "--json"]);
  assert.throws(
    () => parseArgs(["--output"], OPTIONS),
    /^TypeError: Option '-o, --output <value>' argument missing$/,
  );
});
