/** `hermes run` with the `openai` provider over real HTTP against the scripted OpenAI-compatible server. */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const job = (url: string, extra = "") =>
  `name: remote\nmodel: { name: test-model, base_url: "${url}", api_key_env: TEST_API_KEY${extra} }\n` +
  `prompt: list the files\ntools:\n  list_dir: { paths: ["."] }\n`;

for (const stream of [false, true]) {
  Deno.test(`run (openai, stream: ${stream}): tool call round trip, key sent, key never printed`, async () => {
    await using server = await startOpenAIServer({
      apiKey: "sk-test-secret-123456",
      script: [
        { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
        { content: "There is a job file." },
      ],
    }).then((s) => Object.assign(s, { [Symbol.asyncDispose]: () => s.close() }));
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, `, stream: ${stream}`) });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_API_KEY: "sk-test-secret-123456" } });
    assert.equal(code, 0, stderr);
    assert.equal(events.at(-1)!.final, "There is a job file.");
    const toolResult = events.find((e) => e.type === "tool.result");
    assert.match(String(toolResult?.content), /job\.yaml/);
    assert.equal(server.requests.length, 2);
    assert.equal(server.requests[0]!.tools?.length, 1);
    const second = server.requests[1]!.messages as { role: string }[];
    assert.deepEqual(second.map((m) => m.role), ["user", "assistant", "tool"]);
    assert.doesNotMatch(JSON.stringify(events) + stderr, /sk-test-secret-123456/);
  });
}

Deno.test("run (openai): a 429 then success emits provider.retry and exits 0", async () => {
  const server = await startOpenAIServer([
    { error: { status: 429, message: "slow down", retry_after: 0 } },
    { content: "ok after retry" },
  ]);
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url) });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_API_KEY: "k" } });
    assert.equal(code, 0, stderr);
    const retries = events.filter((e) => e.type === "provider.retry");
    assert.equal(retries.length, 1);
    assert.equal(retries[0]!.status, 429);
    assert.equal(events.at(-1)!.final, "ok after retry");
  } finally {
    await server.close();
  }
});

Deno.test("run (openai): 500 until retries run out → exit 1, provider_error", async () => {
  const failure = { error: { status: 500, message: "boom" } };
  const server = await startOpenAIServer([failure, failure, failure]);
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, ", max_retries: 2") });
    const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { TEST_API_KEY: "k" },
    });
    assert.equal(code, 1);
    const result = JSON.parse(stdout);
    assert.equal(result.status, "failed");
    assert.equal(result.terminal_reason, "provider_error");
    assert.match(result.error, /HTTP 500/);
    assert.equal(server.requests.length, 3);
    assert.match(stderr, /HTTP 500/);
  } finally {
    await server.close();
  }
});

Deno.test("run (openai): api_key_env naming an unset variable is exit 2 before any request; none runs keyless", async () => {
  await using server = await startOpenAIServer([{ content: "keyless answer" }])
    .then((s) => Object.assign(s, { [Symbol.asyncDispose]: () => s.close() }));
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url) });
  const env = { GITHUB_OUTPUT: `${dir}/out` };
  const unset = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
  assert.equal(unset.code, 2, unset.stderr);
  assert.match(
    unset.stderr,
    /^hermes: Cannot call the model: TEST_API_KEY \(model\.api_key_env\) is not set; set it, or api_key_env: none/m,
  );
  assert.equal(JSON.parse(unset.stdout).terminal_reason, "invalid_input");
  assert.match(await Deno.readTextFile(env.GITHUB_OUTPUT), /^exit_code=2$/m);
  assert.equal(server.requests.length, 0, "no request went out");
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    job(server.url).replace("api_key_env: TEST_API_KEY", "api_key_env: none"),
  );
  const keyless = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(keyless.code, 0, keyless.stderr);
  assert.equal(keyless.stdout, "keyless answer\n");
  assert.equal(server.requests.length, 1);
});
