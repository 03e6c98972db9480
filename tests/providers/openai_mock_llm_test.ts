/**
 * The openai provider against a third-party OpenAI-compatible mock server from npm (@dwmkerr/mock-llm),
 * through the real CLI: tool calls without `"type": "function"` and without ids, a final answer without a
 * finish_reason, and an error object inside an HTTP-200 stream (mock-llm streams every error that way).
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";

const MOCK_LLM = "npm:@dwmkerr/mock-llm@0.1.29";
// A test tool, not part of Hermes: pinned in its own lockfile, so deno.lock (which `deno task …` installs
// in full on a cold cache, whatever the task runs) holds only the program's packages.
const MOCK_LLM_LOCK = new URL("../_testing/npm_tools.lock", import.meta.url).pathname;

interface Rule {
  sequence: number;
  status?: number;
  content: unknown;
}

/** Starts mock-llm on a free loopback port with `rules` for /v1/chat/completions; resolves once it listens. */
async function startMockLlm(dir: string, rules: Rule[]) {
  const config = {
    streaming: { chunkSize: 8, chunkIntervalMs: 1 },
    rules: rules.map((r) => ({
      path: "/v1/chat/completions",
      sequence: r.sequence,
      response: { status: r.status ?? 200, content: JSON.stringify(r.content) },
    })),
  };
  await Deno.writeTextFile(`${dir}/mock-llm.json`, JSON.stringify(config));
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-config",
      `--lock=${MOCK_LLM_LOCK}`,
      "--frozen",
      MOCK_LLM,
      "--config",
      `${dir}/mock-llm.json`,
    ],
    env: { HOST: "127.0.0.1", PORT: String(port), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = Date.now() + 120_000;
  while (!seen.includes("server running")) {
    const { value, done } = await output.read();
    if (done || Date.now() > deadline) throw new Error(`mock-llm did not start: ${seen}`);
    seen += value;
  }
  const drain = (async () => {
    while (!(await output.read()).done) { /* keep the pipe flowing */ }
  })();
  const stderr = child.stderr.pipeTo(new WritableStream());
  return {
    url: `http://127.0.0.1:${port}/v1`,
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await Promise.all([child.status, drain, stderr]);
    },
  };
}

function job(url: string, stream: boolean): string {
  return `name: wild
model: { name: mock, base_url: "${url}", api_key_env: none, stream: ${stream}, max_retries: 2 }
prompt: List this directory, then say what is in it.
tools: { list_dir: { paths: ["."] } }
`;
}

const run = (dir: string) =>
  hermes(["run", "job.yaml", "--output", "stream-json"], {
    cwd: dir,
    home: dir,
    env: { OPENAI_API_KEY: "k" },
  });
const eventsOf = (stdout: string) => stdout.trim().split("\n").map((line) => JSON.parse(line));

Deno.test("mock-llm: an untyped, id-less tool call is a function call; an answer without finish_reason is whole", async () => {
  const dir = await writeFiles(await tempDir(), { "a.txt": "a" });
  await using server = await startMockLlm(dir, [
    {
      sequence: 0,
      content: {
        choices: [{
          message: {
            role: "assistant",
            tool_calls: [{ function: { name: "list_dir", arguments: '{"path":"."}' } }],
          },
          finish_reason: "tool_calls",
        }],
      },
    },
    { sequence: 1, content: { choices: [{ message: { role: "assistant", content: "It holds a.txt." } }] } },
  ]);
  await Deno.writeTextFile(`${dir}/job.yaml`, job(server.url, false));
  const r = await run(dir);
  assert.equal(r.code, 0, r.stderr);
  const events = eventsOf(r.stdout);
  const result = events.find((e) => e.type === "tool.result");
  assert.equal(result?.tool, "list_dir");
  assert.match(String(result?.content), /a\.txt/);
  assert.equal(events.at(-1).final, "It holds a.txt.");
});

Deno.test("mock-llm: a 429 sent inside an HTTP-200 stream is retried; a 400 there is not", async () => {
  const dir = await tempDir();
  const error = (type: string, code: string) => ({ error: { message: `${type} from the mock`, type, code } });
  await using server = await startMockLlm(dir, [
    { sequence: 0, status: 429, content: error("rate_limit_error", "rate_limit_exceeded") },
    { sequence: 1, content: { choices: [{ message: { role: "assistant", content: "Recovered." } }] } },
    { sequence: 2, status: 400, content: error("invalid_request_error", "bad_field") },
    { sequence: 3, content: { choices: [{ message: { role: "assistant", content: "never sent" } }] } },
  ]);
  await Deno.writeTextFile(`${dir}/job.yaml`, job(server.url, true).replace(/tools: .*\n/, ""));
  const recovered = await run(dir);
  assert.equal(recovered.code, 0, recovered.stderr);
  const events = eventsOf(recovered.stdout);
  assert.deepEqual(events.filter((e) => e.type === "provider.retry").map((e) => e.status), [429]);
  assert.equal(events.at(-1).final, "Recovered.");

  const refused = await run(dir);
  assert.equal(refused.code, 1, refused.stderr);
  const last = eventsOf(refused.stdout).at(-1);
  assert.equal(last.terminal_reason, "provider_error");
  assert.match(last.error, /carrying HTTP 400 .*invalid_request_error from the mock/);
  assert.equal(eventsOf(refused.stdout).some((e) => e.type === "provider.retry"), false);
});
