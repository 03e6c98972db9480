import assert from "node:assert/strict";
import { createRedactor, findSecrets, redactorOf, redactValue } from "./redact.ts";

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

Deno.test("redact: declared credentials are secrets whatever their names, in the form each variable holds them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/adc.json`;
    await Deno.writeTextFile(file, JSON.stringify({ private_key: "-----KEY-----", client_email: "a@b.c" }));
    const secrets = findSecrets({
      AWS_BEARER_TOKEN_BEDROCK: "bedrock-api-key",
      OTEL_EXPORTER_OTLP_HEADERS: "x-key=abc%2Fdef123,x-team=ci-team",
      HERMES_DATABASE_URL: "postgres://u:pa%40ssword@db/x?password=other-pass",
      GOOGLE_APPLICATION_CREDENTIALS: file,
      SOMETHING_ELSE: "plain-value-here",
    }, {
      credentials: [
        { name: "AWS_BEARER_TOKEN_BEDROCK", form: "value" },
        { name: "OTEL_EXPORTER_OTLP_HEADERS", form: "header_values" },
        { name: "HERMES_DATABASE_URL", form: "url_password" },
        { name: "GOOGLE_APPLICATION_CREDENTIALS", form: "credentials_file" },
        { name: "MISSING", form: "value" },
      ],
    });
    assert.deepEqual(
      [...secrets].sort(),
      [
        ["-----KEY-----", "GOOGLE_APPLICATION_CREDENTIALS"],
        ["abc%2Fdef123", "OTEL_EXPORTER_OTLP_HEADERS"],
        ["abc/def123", "OTEL_EXPORTER_OTLP_HEADERS"],
        ["bedrock-api-key", "AWS_BEARER_TOKEN_BEDROCK"],
        ["ci-team", "OTEL_EXPORTER_OTLP_HEADERS"],
        ["other-pass", "HERMES_DATABASE_URL"],
        ["pa%40ssword", "HERMES_DATABASE_URL"],
        ["pa@ssword", "HERMES_DATABASE_URL"],
      ].sort(),
    );
    // The URL itself stays readable once its password is out.
    assert.equal(
      redactorOf(secrets)("postgres://u:pa%40ssword@db/x"),
      "postgres://u:[REDACTED:HERMES_DATABASE_URL]@db/x",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("redactValue leaves out a signed block that holds a secret; one without stays whole", () => {
  const redact = redactorOf(new Map([["hunter2-secret", "PASSWORD"]]));
  const message = {
    role: "assistant",
    content: "said hunter2-secret",
    reasoning: [
      { type: "thinking", thinking: "the hunter2-secret is", signature: "sig1" },
      { type: "thinking", thinking: "nothing here", signature: "sig2" },
      { type: "redacted_thinking", data: "enc-hunter2-secret" },
      { type: "redacted_thinking", data: "encrypted" },
    ],
  };
  assert.deepEqual(redactValue(message, redact), {
    role: "assistant",
    content: "said [REDACTED:PASSWORD]",
    reasoning: [
      { type: "thinking", thinking: "nothing here", signature: "sig2" },
      { type: "redacted_thinking", data: "encrypted" },
    ],
  });
});
