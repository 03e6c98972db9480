import assert from "node:assert/strict";
import { exposedName, filteredOut } from "./names.ts";

Deno.test("mcp names: mcp__SERVER__TOOL within what chat APIs accept", () => {
  assert.equal(exposedName("fs", "read_file"), "mcp__fs__read_file");
  assert.equal(exposedName("gh", "issues.list"), "mcp__gh__issues_list");
  assert.equal(exposedName("s", "x".repeat(100)).length, 64);
});

Deno.test("mcp names: allow and deny globs; deny wins; no allow list offers everything", () => {
  assert.equal(filteredOut("write_file", undefined), null);
  assert.equal(filteredOut("read_file", { allow: ["read_*"] }), null);
  assert.equal(filteredOut("list_dir", { allow: ["read_*"] }), "not in tools.allow");
  assert.equal(
    filteredOut("write_file", { allow: ["*"], deny: ["write_*"] }),
    'denied by tools.deny "write_*"',
  );
  assert.equal(filteredOut("read.x", { allow: ["read?x"] }), null);
  assert.equal(filteredOut("readyx", { allow: ["read.x"] }), "not in tools.allow", "a dot is literal");
});
