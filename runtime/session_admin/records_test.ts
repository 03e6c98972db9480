import assert from "node:assert/strict";
import { redactDeep } from "./records.ts";

Deno.test("redactDeep redacts every string in nested JSON, keys and non-strings untouched", () => {
  const redact = (text: string) => text.replaceAll("s3cr3t", "[REDACTED]");
  assert.deepEqual(
    redactDeep({ s3cr3t: ["a s3cr3t", 1, null, { x: 's"3"s3cr3t' }], n: true }, redact),
    { s3cr3t: ["a [REDACTED]", 1, null, { x: 's"3"[REDACTED]' }], n: true },
  );
});
