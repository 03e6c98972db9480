import assert from "node:assert/strict";
import { BUILTIN_TOOL_NAMES } from "./names.ts";
import { builtinTools } from "./builtin.ts";

Deno.test("BUILTIN_TOOL_NAMES lists every tool builtinTools can build", async () => {
  const tools = await builtinTools(
    { shell: { allow: ["*"] }, read_file: {}, write_file: {}, list_dir: {}, http_fetch: {} },
    { job_dir: Deno.cwd(), sandbox: null },
  );
  assert.deepEqual(tools.map((t) => t.spec.name).sort(), [...BUILTIN_TOOL_NAMES].sort());
});
