import assert from "node:assert/strict";
import { ValidationError } from "../runtime/core/errors.ts";
import { expandArgsLines, splitArgsLine } from "./_args_line.ts";

Deno.test("splitArgsLine: words, quotes and escapes; nothing expanded", () => {
  const cases: [string, string[]][] = [
    ["--max-turns 20 --model gpt-4.1", ["--max-turns", "20", "--model", "gpt-4.1"]],
    ["  a\t b\n\nc  ", ["a", "b", "c"]],
    [`--input 'note=two  words' -i "x=say \\"hi\\" \\\\ \\n"`, [
      "--input",
      "note=two  words",
      "-i",
      'x=say "hi" \\ \\n',
    ]],
    [`a'b c'"d e"f`, ["ab cd ef"]],
    [`'' ""`, ["", ""]],
    [`it\\'s a\\ b`, ["it's", "a b"]],
    ["$HOME `id` $(touch x) ; | & * ~ > y", [
      "$HOME",
      "`id`",
      "$(touch",
      "x)",
      ";",
      "|",
      "&",
      "*",
      "~",
      ">",
      "y",
    ]],
    ["--max-turns 5 # a comment\n--model m", ["--max-turns", "5", "--model", "m"]],
    ["a#b '#c'", ["a#b", "#c"]],
    ["", []],
  ];
  for (const [line, words] of cases) assert.deepEqual(splitArgsLine(line), words, line);
});

Deno.test("splitArgsLine: an unterminated quote or a trailing backslash names where", () => {
  const cases: [string, RegExp][] = [
    ["--model 'gpt", /unterminated ' quote at line 1, column 9/],
    ['a\n  "b', /unterminated " quote at line 2, column 3/],
    ["a \\", /a \\ with nothing after it at line 1, column 3/],
  ];
  for (const [line, message] of cases) {
    assert.throws(
      () => splitArgsLine(line),
      (e: Error) => e instanceof ValidationError && message.test(e.message),
    );
  }
});

Deno.test("expandArgsLines: each --args line becomes its words in place; global flags and nesting refused", () => {
  assert.deepEqual(
    expandArgsLines([
      "job.yaml",
      "--args",
      "--max-turns 3 -i 'a=b c'",
      "--output",
      "json",
      "--args=--model m",
    ]),
    ["job.yaml", "--max-turns", "3", "-i", "a=b c", "--output", "json", "--model", "m"],
  );
  assert.deepEqual(
    expandArgsLines(["--", "--args", "x y"]),
    ["--", "--args", "x y"],
    "after -- nothing is a flag",
  );
  for (
    const [line, message] of [
      ["--home /tmp/x", /--args cannot hold --home: a global flag goes before the command/],
      ["--log-level=debug", /--args cannot hold --log-level/],
      ["-q", /--args cannot hold -q/],
      ["--args 'x'", /--args cannot hold --args: one line of flags, not nested ones/],
    ] as const
  ) {
    assert.throws(() => expandArgsLines(["--args", line]), message);
  }
  assert.throws(() => expandArgsLines(["--args"]), /--args needs a value/);
});
