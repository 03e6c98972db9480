import assert from "node:assert/strict";
import { findDeno } from "./deno_path.ts";

Deno.test("findDeno prefers HERMES_DENO, then the running deno", () => {
  assert.equal(findDeno({ HERMES_DENO: "/opt/deno/bin/deno" }), "/opt/deno/bin/deno");
  assert.equal(findDeno({}), Deno.execPath());
});
