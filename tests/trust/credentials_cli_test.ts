/**
 * Credentials Hermes reads under names no rule recognises stay out of everything it writes: a Bedrock API key
 * (AWS_BEARER_TOKEN_BEDROCK, sent as a bearer token), an OTLP collector header, the store URL's password and a
 * Google credentials file's private key, each echoed back by a model server's error, are redacted in
 * stream-json, on stderr and in the exported spans, through the real CLI. The neighbour: a variable Hermes
 * does not read (and whose name is not secret-looking) is printed as it is. A signed thinking block that holds
 * a secret is left out of what goes back to the model (rewritten, its signature would break the session);
 * one without a secret goes back unchanged.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startAnthropicServer, type WireBody } from "../_testing/anthropic_server.ts";
import { startOtlpReceiver } from "../_testing/otlp_receiver.ts";

const BEDROCK_KEY = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWtleQ";
const COLLECTOR_TOKEN = "otlp-collector-token-0042";
const DB_PASSWORD = "pg-pass/word-7781";
const PRIVATE_KEY =
  "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n";
const PLAIN = "not-a-credential-value-5150";

Deno.test("run: credentials from the variables providers, the exporter and the store read are redacted everywhere", async () => {
  const receiver = startOtlpReceiver();
  await using server = await startAnthropicServer({
    bedrock: true,
    // A server that echoes what it was sent (a proxy's error page, a debugging gateway).
    authorize: (request) =>
      `rejected ${request.headers.get("authorization")} for ${COLLECTOR_TOKEN} ${DB_PASSWORD} ` +
      `${JSON.stringify(PRIVATE_KEY)} ${PLAIN}`,
    script: [{ content: "never" }],
  });
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": "name: bedrock\nmodel: { provider: anthropic, platform: bedrock, " +
        `name: anthropic.claude-test-v1:0, stream: false, base_url: "${server.url}", max_retries: 0 }\n` +
        "prompt: hello\n",
      "google.json": JSON.stringify({
        type: "service_account",
        private_key: PRIVATE_KEY,
        client_email: "a@b.c",
      }),
    });
    const run = await hermes(["run", "job.yaml", "--output", "stream-json", "--db", `${dir}/state.db`], {
      cwd: dir,
      home: dir,
      env: {
        AWS_BEARER_TOKEN_BEDROCK: BEDROCK_KEY,
        AWS_REGION: "us-west-2",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${encodeURIComponent(COLLECTOR_TOKEN)},x-team=ci`,
        // --db wins over it (the run uses SQLite); its password is a secret all the same.
        HERMES_DATABASE_URL: `postgres://hermes:${encodeURIComponent(DB_PASSWORD)}@db.invalid/hermes`,
        GOOGLE_APPLICATION_CREDENTIALS: `${dir}/google.json`,
        HERMES_SEEN: PLAIN,
      },
    });
    assert.notEqual(run.code, 0, run.stdout);
    assert.equal(
      server.records[0]?.headers.get("authorization"),
      `Bearer ${BEDROCK_KEY}`,
      "the key was sent",
    );
    const exported = receiver.bodies.join("\n");
    for (const [where, text] of [["stream-json", run.stdout], ["stderr", run.stderr], ["OTLP", exported]]) {
      for (const secret of [BEDROCK_KEY, COLLECTOR_TOKEN, DB_PASSWORD, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"]) {
        assert.equal(text!.includes(secret), false, `${where} holds ${secret}`);
      }
    }
    assert.match(run.stdout, /\[REDACTED:AWS_BEARER_TOKEN_BEDROCK\]/);
    assert.match(run.stdout, /\[REDACTED:OTEL_EXPORTER_OTLP_HEADERS\]/);
    assert.match(run.stdout, /\[REDACTED:HERMES_DATABASE_URL\]/);
    assert.match(run.stdout, /\[REDACTED:GOOGLE_APPLICATION_CREDENTIALS\]/);
    assert.match(run.stdout, new RegExp(PLAIN), "a value Hermes does not read as a credential stays");
  } finally {
    await receiver.close();
  }
});

Deno.test("run: a thinking block holding a secret is dropped from the next requests, not rewritten", async () => {
  const key = "sk-ant-test-key-for-thinking";
  await using server = await startAnthropicServer([
    { thinking: `The key is ${key}; list the directory.`, tool_calls: [{ name: "list_dir", arguments: {} }] },
    { content: "There is a job file." },
    { thinking: "Nothing secret here.", content: "Still one file." },
  ]);
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: claude\nmodel: { provider: anthropic, name: claude-test, max_output_tokens: 4096, " +
      'thinking: { budget_tokens: 2048 } }\nprompt: list the files\ntools:\n  list_dir: { paths: ["."] }\n',
  });
  const env = { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.url };
  const run = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
  assert.equal(run.code, 0, run.stderr);
  const { final, session_id } = JSON.parse(run.stdout);
  assert.equal(final, "There is a job file.");
  // The next user turn has thinking again (a fresh round), and the dropped block stays dropped.
  const resumed = await hermes(["run", "--resume", session_id, "-p", "and now?", "--output", "json"], {
    cwd: dir,
    home: dir,
    env,
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(JSON.parse(resumed.stdout).final, "Still one file.");
  assert.deepEqual(server.records.map((r) => r.status), [200, 200, 200], "every request was accepted");
  const sent = (body: WireBody, index: number) =>
    (body.messages![index]!.content as { type: string; thinking?: string }[]).map((b) => b.type);
  const [, round, later] = server.records.map((r) => r.body);
  assert.deepEqual(sent(round!, 1), ["tool_use"], "the block with the key is left out, not rewritten");
  assert.equal(round!.thinking, undefined, "the rest of that tool round runs without thinking");
  assert.deepEqual(later!.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.equal(JSON.stringify(server.records.map((r) => r.body)).includes(key), false);
});
