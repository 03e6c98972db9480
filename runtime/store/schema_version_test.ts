import assert from "node:assert/strict";
import { migrations } from "./_migrations.ts";
import { SCHEMA_VERSION } from "./schema_version.ts";

Deno.test("the schema version the lister compares is the number of migrations", () => {
  assert.equal(SCHEMA_VERSION, migrations.length);
});
