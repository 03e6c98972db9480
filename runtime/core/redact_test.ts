import assert from "node:assert/strict";
import { createRedactor, findSecrets, redactValue } from "./redact.ts";

Deno.test("findSecrets takes secret-looking names and the names given; short values are ignored", () => {
  const secrets = findSecrets(
    { A_TOKEN: "tok-123456", PLAIN: "plain-value", MINE: "mine-value", DB_PASSWORD: "short" },
    { names: ["MINE"] },
  );
  assert.deepEqual([...secrets], [["tok-123456", "A_TOKEN"], ["mine-value", "MINE"]]);
});

Deno.test("redactValue redacts strings inside values, never the serialized form; other values are kept", () => {
  const secret = 'a"b\\c\td-1234';
  const redact = createRedactor({ X_SECRET: secret });
  const bytes = new Uint8Array([1, 2]);
  const out = redactValue({ s: `x ${secret} y`, list: [secret, 3], nested: { bytes, ok: true } }, redact);
  assert.deepEqual(out, {
    s: "x [REDACTED:X_SECRET] y",
    list: ["[REDACTED:X_SECRET]", 3],
    nested: { bytes, ok: true },
  });
  assert.equal(out.nested.bytes, bytes, "class instances are passed as they are");
  assert.ok(!JSON.stringify(out).includes(JSON.stringify(secret).slice(1, -1)));
});
