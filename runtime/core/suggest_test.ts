import assert from "node:assert/strict";
import { didYouMean, nearest } from "./suggest.ts";

Deno.test("nearest suggests a close candidate and nothing for a far one", () => {
  assert.equal(nearest("sessons", ["run", "sessions", "schema"]), "sessions");
  assert.equal(nearest("outptu", ["output", "input"]), "output");
  assert.equal(nearest("frobnicate", ["run", "sessions", "schema"]), undefined);
  assert.equal(didYouMean("Sesions", ["sessions"]), ' (did you mean "sessions"?)');
  assert.equal(didYouMean("zzz", ["sessions"]), "");
});
