import assert from "node:assert/strict";
import { isCurrent } from "../../../scripts/console_assets.ts";

Deno.test("console assets: _generated/assets.ts was generated from today's inputs (deno task generate)", async () => {
  assert.ok(
    await isCurrent(),
    "runtime/http/console/_generated/assets.ts is stale: run `deno task generate`",
  );
});
