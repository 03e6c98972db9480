/**
 * `hermes run --record` and `hermes replay` through the real CLI: a tool-using run recorded against the
 * scripted OpenAI-compatible server over HTTP, replayed with that server gone and the job pointing at a
 * listener that counts connections; divergences in the prompt and in a tool result.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { CassetteSchema } from "../../runtime/cassette/schema.ts";
import { RpcClient } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const SECRET = "sk-test-secret-123456";
const ENV = { TEST_API_KEY: SECRET };

const job = (url: string, prompt = "list the files ({{ env.TEST_API_KEY }})") =>
  `name: remote\nmodel: { name: test-model, base_url: "${url}", api_key_env: TEST_API_KEY, stream: true }\n` +
  `prompt: "${prompt}"\ntools:\n  list_dir: { paths: ["."] }\n`;

/** A TCP listener that accepts and counts connections: proof that a replay attempted none. */
function countingListener(): { url: string; accepted: () => number; close: () => Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        conn.close();
      }
    } catch { /* closed */ }
  })();
  return {
    url: `http://127.0.0.1:${listener.addr.port}/v1`,
    accepted: () => accepted,
    close: async () => {
      listener.close();
      await loop;
    },
  };
}

/** Records a two-call run (list_dir, then an answer) in a fresh folder; returns the folder and result. */
async function recorded(): Promise<{ dir: string; home: string; result: Record<string, unknown> }> {
  const server = await startOpenAIServer({
    apiKey: SECRET,
    script: [
      { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
      { content: "There is a job file and a notes file." },
    ],
  });
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url), "notes.txt": "hello\n" });
    // The store and the cassette live outside the job's folder, whose listing is the tool's result.
    const home = await tempDir();
    const run = await hermes(
      ["run", "job.yaml", "--record", `${home}/run.cassette.json`, "--output", "json"],
      {
        cwd: dir,
        home,
        env: ENV,
      },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(server.requests.length, 2);
    return { dir, home, result: JSON.parse(run.stdout) };
  } finally {
    await server.close();
  }
}

/** The result without what differs between any two runs. */
function stable(result: Record<string, unknown>): Record<string, unknown> {
  const { session_id: _id, duration_ms: _ms, ...rest } = result;
  return rest;
}

Deno.test("run --record writes a valid cassette: normalised requests, streamed text, tool results, secrets replaced", async () => {
  const { home } = await recorded();
  const text = await Deno.readTextFile(`${home}/run.cassette.json`);
  assert.doesNotMatch(text, new RegExp(SECRET));
  const cassette = CassetteSchema.parse(JSON.parse(text));
  assert.equal(cassette.job.name, "remote");
  assert.match(cassette.job.hash, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(cassette.outcome, { status: "success", terminal_reason: "completed" });
  assert.deepEqual(cassette.exchanges.map((e) => e.type), ["model", "tool", "model"]);
  const [first, tool, second] = cassette.exchanges as [
    Extract<typeof cassette.exchanges[number], { type: "model" }>,
    Extract<typeof cassette.exchanges[number], { type: "tool" }>,
    Extract<typeof cassette.exchanges[number], { type: "model" }>,
  ];
  assert.equal(first.request.messages[0]!.content, "list the files ([REDACTED:TEST_API_KEY])");
  assert.equal(tool.tool, "list_dir");
  assert.deepEqual(tool.args, { path: "." });
  assert.match(tool.result.content, /notes\.txt/);
  // The provider's call id is answered as it came, and kept normalised in the next request.
  const sent = second.request.messages;
  assert.equal(sent[1]!.tool_calls![0]!.id, "call_1");
  assert.equal(sent[2]!.tool_call_id, "call_1");
  assert.equal(second.response!.message.content, "There is a job file and a notes file.");
  assert.ok(second.response!.stream!.length > 1, "the streamed chunks are kept");
  assert.equal(second.response!.stream!.join(""), "There is a job file and a notes file.");
  assert.ok(second.response!.usage!.prompt_tokens > 0);
});

Deno.test("replay with the model server gone: same result, no connection attempted", async () => {
  const { dir, home, result } = await recorded();
  const listener = countingListener();
  try {
    // The job now names a listener that would see any connection; the cassette's own job names a closed port.
    await Deno.writeTextFile(`${dir}/job.yaml`, job(listener.url));
    for (const args of [["--job", "job.yaml"], []]) {
      const replay = await hermes(["replay", `${home}/run.cassette.json`, ...args, "--output", "json"], {
        cwd: dir,
        home,
        env: ENV,
      });
      assert.equal(replay.code, 0, replay.stderr);
      assert.deepEqual(stable(JSON.parse(replay.stdout)), stable(result));
    }
    assert.equal(listener.accepted(), 0);
  } finally {
    await listener.close();
  }
});

Deno.test("replay: a changed prompt stops at the first divergence, naming the call, message and field", async () => {
  const { dir, home } = await recorded();
  await Deno.writeTextFile(`${dir}/job.yaml`, job("http://127.0.0.1:9/v1", "list all the files"));
  const replay = await hermes([
    "replay",
    `${home}/run.cassette.json`,
    "--job",
    "job.yaml",
    "--output",
    "json",
  ], {
    cwd: dir,
    home,
    env: ENV,
  });
  assert.equal(replay.code, 1, replay.stderr);
  const result = JSON.parse(replay.stdout);
  assert.equal(result.status, "failed");
  assert.equal(result.terminal_reason, "replay_diverged");
  assert.match(
    result.error,
    /model call 1: message 1 \(user\) content: recorded .*list the files.*, now .*list all the files/,
  );
  assert.match(replay.stderr, /replay diverged: model call 1: message 1 \(user\) content/);
});

Deno.test("replay --tools live: a different tool result is a divergence; --tools recorded serves the recorded one", async () => {
  const { dir, home, result } = await recorded();
  await Deno.writeTextFile(`${dir}/added.txt`, "new\n");
  const live = await hermes(["replay", `${home}/run.cassette.json`, "--tools", "live", "--output", "json"], {
    cwd: dir,
    home,
    env: ENV,
  });
  assert.equal(live.code, 1, live.stderr);
  const diverged = JSON.parse(live.stdout);
  assert.equal(diverged.terminal_reason, "replay_diverged");
  assert.match(diverged.error, /tool call 1 \(list_dir\) result content: recorded .*, now .*added\.txt/);
  const served = await hermes(["replay", `${home}/run.cassette.json`, "--output", "json"], {
    cwd: dir,
    home,
    env: ENV,
  });
  assert.equal(served.code, 0, served.stderr);
  assert.deepEqual(stable(JSON.parse(served.stdout)), stable(result));
  // Live with nothing changed replays as well.
  await Deno.remove(`${dir}/added.txt`);
  const same = await hermes(["replay", `${home}/run.cassette.json`, "--tools", "live", "--output", "json"], {
    cwd: dir,
    home,
    env: ENV,
  });
  assert.equal(same.code, 0, same.stderr);
});

Deno.test("replay: bad cassettes and flags are exit 2 naming the problem", async () => {
  const dir = await writeFiles(await tempDir(), {
    "old.json": JSON.stringify({ cassette_version: 99 }),
    "broken.json": JSON.stringify({
      cassette_version: 1,
      hermes_version: "x",
      job: {},
      outcome: null,
      exchanges: [],
    }),
  });
  const missing = await hermes(["replay", "nope.json"], { cwd: dir, home: dir });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Cannot read cassette "nope.json"/);
  const old = await hermes(["replay", "old.json"], { cwd: dir, home: dir });
  assert.equal(old.code, 2);
  assert.match(old.stderr, /cassette_version is 99; this Hermes reads version 1/);
  const broken = await hermes(["replay", "broken.json"], { cwd: dir, home: dir });
  assert.equal(broken.code, 2);
  assert.match(broken.stderr, /broken\.json: job\.name: /);
  const mode = await hermes(["replay", "old.json", "--tools", "sometimes"], { cwd: dir, home: dir });
  assert.equal(mode.code, 2);
  assert.match(mode.stderr, /invalid --tools "sometimes": expected recorded or live/);
});

Deno.test("job key record: records runs without the flag (RPC, queued runs); a path outside the job folder is exit 2", async () => {
  const server = await startOpenAIServer({ script: [{ content: "done" }] });
  try {
    const jobText = (record: string) =>
      `name: keyed\nrecord: ${record}\nmodel: { name: m, base_url: "${server.url}", api_key_env: none }\n` +
      "prompt: say done\n";
    const dir = await writeFiles(await tempDir(), { "job.yaml": jobText("./out/run.json") });
    await Deno.mkdir(`${dir}/out`);
    const home = await tempDir();
    const run = await hermes(["run", "job.yaml"], { cwd: dir, home });
    assert.equal(run.code, 0, run.stderr);
    const cassette = CassetteSchema.parse(JSON.parse(await Deno.readTextFile(`${dir}/out/run.json`)));
    assert.equal(cassette.exchanges.length, 1);
    await Deno.writeTextFile(`${dir}/job.yaml`, jobText("../escaped.json"));
    const outside = await hermes(["run", "job.yaml"], { cwd: dir, home });
    assert.equal(outside.code, 2, outside.stderr);
    assert.match(
      outside.stderr,
      /Cannot record to "\.\.\/escaped\.json" \(record:\): it resolves outside the job directory/,
    );
    assert.equal(server.requests.length, 1, "refused before any model call");
  } finally {
    await server.close();
  }
});

Deno.test("job key record: an RPC job.run records its cassette too, and it replays", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: rpc-rec\nrecord: run.json\nmodel: { provider: scripted, script: replies.yaml }\n" +
      "prompt: hi\n",
    "replies.yaml": "- content: hello over rpc\n",
  });
  {
    await using client = new RpcClient({ home: dir, cwd: dir });
    const response = await client.request("job.run", { path: "job.yaml" }) as { result: { final: string } };
    assert.equal(response.result.final, "hello over rpc");
    assert.equal((await client.finish()).code, 0);
  }
  const cassette = CassetteSchema.parse(JSON.parse(await Deno.readTextFile(`${dir}/run.json`)));
  assert.equal(cassette.exchanges.length, 1);
  const replay = await hermes(["replay", "run.json"], { cwd: dir, home: dir });
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(replay.stdout, "hello over rpc\n");
});

Deno.test({
  name:
    "replay --tools recorded needs no sandbox: a shell job replays where bubblewrap is missing; live does not",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: sh\nmodel: { provider: scripted, script: replies.yaml }\nprompt: run echo\n" +
      'tools:\n  shell: { allow: ["echo *"] }\n',
    "replies.yaml": '- tool_calls: [{ name: shell, arguments: { command: "echo hi" } }]\n- content: done\n',
  });
  const home = await tempDir();
  const run = await hermes(["run", "job.yaml", "--record", `${home}/c.json`], { cwd: dir, home });
  assert.equal(run.code, 0, run.stderr);
  const noBwrap = { HERMES_BWRAP: `${dir}/no-bwrap-here`, PATH: "/nonexistent" };
  const recorded = await hermes(["replay", `${home}/c.json`], { cwd: dir, home, env: noBwrap });
  assert.equal(recorded.code, 0, recorded.stderr);
  assert.equal(recorded.stdout, "done\n");
  const live = await hermes(["replay", `${home}/c.json`, "--tools", "live"], {
    cwd: dir,
    home,
    env: noBwrap,
  });
  assert.notEqual(live.code, 0);
  assert.match(live.stderr, /Cannot run the shell tool in its OS sandbox/);
});
