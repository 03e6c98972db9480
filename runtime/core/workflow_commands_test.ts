import assert from "node:assert/strict";
import { escapeData, escapeProperty, inertLine } from "./workflow_commands.ts";

/**
 * Whether the Actions runner takes `line` for a workflow command (actions/runner ActionCommand: TryParseV2,
 * a `::` after leading whitespace and a second `::`; TryParse, `##[` anywhere with a `]` after it).
 */
function runnerCommand(line: string): boolean {
  const trimmed = line.trimStart();
  if (trimmed.startsWith("::") && trimmed.indexOf("::", 2) >= 0) return true;
  const at = line.indexOf("##[");
  return at >= 0 && line.indexOf("]", at) >= 0;
}

Deno.test("inertLine: no line of what it prints is a workflow command; plain text passes as it was", () => {
  const hostile = [
    "::add-mask::hermes",
    "  \t::error title=x::y",
    "\u00a0::stop-commands::token",
    'denied: "a\n::error::injected\r\n::add-mask::b"',
    "text ##[error]legacy form anywhere",
    "50% of %0A",
  ];
  for (const text of hostile) {
    const printed = inertLine(text);
    assert.equal(printed.split(/\r\n|\r|\n/).length, 1, text);
    assert.equal(runnerCommand(printed), false, printed);
  }
  assert.equal(inertLine('denied: "a\n::error::x"'), 'denied: "a%0A::error::x"');
  assert.equal(inertLine("  ::add-mask::x"), "  %3A%3Aadd-mask::x");
  assert.equal(inertLine("50% of %0A"), "50%25 of %250A", "a literal %0A stays distinguishable");
  assert.equal(
    inertLine("hermes info: tool shell → ok, 2 B, 3 ms"),
    "hermes info: tool shell → ok, 2 B, 3 ms",
  );
  assert.equal(inertLine("a :: b # [c]"), "a :: b # [c]");
});

Deno.test("escapeData and escapeProperty: GitHub's toolkit escapes", () => {
  assert.equal(escapeData("a%b\r\nc"), "a%25b%0D%0Ac");
  assert.equal(escapeProperty("x:y,z%\n"), "x%3Ay%2Cz%25%0A");
});
