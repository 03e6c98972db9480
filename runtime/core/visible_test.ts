import assert from "node:assert/strict";
import { visibleText } from "./visible.ts";

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
