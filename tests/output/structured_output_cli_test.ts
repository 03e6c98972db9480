/**
 * Native structured outputs through the real CLI: with `output.schema` the request carries `response_format:
 * {type: "json_schema", json_schema: {name, schema, strict}}` (strict only when OpenAI's strict rules allow
 * the schema); a server that refuses it (HTTP 400) still yields a validated output, through the prompt, and
 * the session remembers that across a resume; `model.structured_output: native | prompt` choose one way.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, startOpenAIServer } from "../_testing/openai_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

const strictSchema = {
  type: "object",
  properties: { labels: { type: "array", items: { type: "string" } }, count: { type: "integer" } },
  required: ["labels", "count"],
  additionalProperties: false,
};
// `minLength` and an optional property are outside OpenAI's strict rules.
const looseSchema = {
  type: "object",
  properties: { title: { type: "string", minLength: 3 }, note: { type: "string" } },
  required: ["title"],
};

const answer = (value: unknown): ScriptEntry => ({ content: JSON.stringify(value) });
const refuseNative = (body: ChatRequestBody) =>
  body.response_format === undefined
    ? undefined
    : "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.";

async function serve(script: ScriptEntry[], refuse?: (body: ChatRequestBody) => string | undefined) {
  const server = await startOpenAIServer({ script, ...(refuse ? { refuse } : {}) });
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.close() });
}

function job(url: string, schema: unknown, extra = "") {
  return `name: triage.v2\nmodel: { name: gpt-4.1-mini, base_url: "${url}", api_key_env: none${extra} }\n` +
    `prompt: label the issues\noutput:\n  schema: ${JSON.stringify(schema)}\n`;
}

Deno.test("structured output: response_format json_schema sent, strict for a schema the strict rules allow", async () => {
  await using server = await serve([answer({ labels: ["bug"], count: 1 })]);
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, strictSchema) });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.deepEqual(events.at(-1)!.output, { labels: ["bug"], count: 1 });
  assert.deepEqual(server.requests[0]!.response_format, {
    type: "json_schema",
    json_schema: { name: "final_answer", schema: strictSchema, strict: true },
  });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("structured output: a schema outside the strict rules goes with strict: false", async () => {
  await using server = await serve([answer({ title: "crash on start" })]);
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, looseSchema) });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.deepEqual(events.at(-1)!.output, { title: "crash on start" });
  const format = server.requests[0]!.response_format as { json_schema: { strict: boolean } };
  assert.equal(format.json_schema.strict, false);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("structured output: a server that refuses response_format (400) still yields a validated output, and the session remembers", async () => {
  await using server = await serve(
    [answer({ labels: ["docs"], count: 1 }), answer({ labels: ["ci", "bug"], count: 2 })],
    refuseNative,
  );
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, strictSchema) });
  const first = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(first.code, 0, first.stderr);
  const result = JSON.parse(first.stdout);
  assert.deepEqual(result.output, { labels: ["docs"], count: 1 });
  assert.match(
    first.stderr,
    /the server refused output\.schema as response_format .*HTTP 400.*asking for it in the prompt/,
  );
  assert.deepEqual(server.requests.map((r) => r.response_format !== undefined), [true, false]);
  // The schema is still asked for in the prompt.
  const system = (server.requests[1]!.messages ?? [])[0]!;
  assert.equal(system.role, "system");
  assert.match(String(system.content), /matches this JSON Schema/);

  // A resumed session does not ask the server again: the refusal is in the store.
  const resumed = await hermes([
    "run",
    "--resume",
    result.session_id,
    "-p",
    "and the next ones",
    "--output",
    "json",
  ], {
    cwd: dir,
    home: dir,
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(JSON.parse(resumed.stdout).output, { labels: ["ci", "bug"], count: 2 });
  assert.deepEqual(server.requests.map((r) => r.response_format !== undefined), [true, false, false]);
  assert.doesNotMatch(resumed.stderr, /refused output\.schema/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("structured output: native insists (a refusal fails the run, exit 1); prompt never sends response_format", async () => {
  await using server = await serve([answer({ labels: [], count: 0 })], refuseNative);
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, strictSchema, ", structured_output: native"),
  });
  const native = await runEvents(dir);
  assert.equal(native.code, 1);
  assert.equal(native.events.at(-1)!.terminal_reason, "provider_error");
  assert.match(String(native.events.at(-1)!.error), /HTTP 400.*response_format/);
  assert.equal(server.remaining, 1, "nothing answered the refused request");

  await Deno.writeTextFile(`${dir}/job.yaml`, job(server.url, strictSchema, ", structured_output: prompt"));
  const prompt = await runEvents(dir);
  assert.equal(prompt.code, 0, prompt.stderr);
  assert.deepEqual(prompt.events.at(-1)!.output, { labels: [], count: 0 });
  assert.equal(server.requests.at(-1)!.response_format, undefined);
  await Deno.remove(dir, { recursive: true });
});
