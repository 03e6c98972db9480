/**
 * `hermes run`, RPC and ACP build the result object with the same code. The same job run through
 * `hermes run --output json` and through RPC `session.create` + `session.prompt` (real subprocesses, the
 * scripted model) yields the same result, ids and times aside (an interruption's `error` names what stopped:
 * the run or the server).
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient, type RpcMessage, splitLines } from "../_testing/rpc_client.ts";

type Result = Record<string, unknown>;

interface Parity {
  run: Result;
  rpc: Result;
  /** `hermes run`'s exit code. */
  code: number;
}

/** Runs `job.yaml` in a fresh directory both ways, each with its own home (store) and the same replies. */
async function bothWays(job: string, replies: string, prompt: string): Promise<Parity> {
  const dir = await writeFiles(await tempDir("hermes-parity-"), {
    "job.yaml": job,
    "replies.yaml": replies,
    "notes.txt": "alpha\nbeta\n",
  });
  const cli = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: `${dir}/home-run` });
  await using client = new RpcClient({ home: `${dir}/home-rpc`, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  assert.equal(created.error, undefined, JSON.stringify(created.error));
  const session_id = (created.result as { session_id: string }).session_id;
  const prompted: RpcMessage = await client.request("session.prompt", { session_id, text: prompt });
  assert.equal(prompted.error, undefined, JSON.stringify(prompted.error));
  const { code } = await client.finish();
  assert.equal(code, 0);
  await Deno.remove(dir, { recursive: true });
  return { run: JSON.parse(cli.stdout), rpc: prompted.result as Result, code: cli.code };
}

/** The result without what differs by nature between two runs: the session id and the wall time. */
function comparable(result: Result): Result {
  const { session_id, duration_ms, ...rest } = result;
  assert.equal(typeof session_id, "string");
  assert.equal(typeof duration_ms, "number");
  return rest;
}

function assertSame({ run, rpc, code }: Parity): Result {
  assert.deepEqual(comparable(rpc), comparable(run));
  assert.equal(code, run.exit_code, "hermes run exits with the result's exit code");
  return comparable(run);
}

const model = "model: { provider: scripted, script: ./replies.yaml }\n";
const SCHEMA_JOB = `name: labels\n${model}prompt: Labels please\n` +
  `output: { schema: { type: object, required: [labels], properties: { labels: { type: array } } } }\n`;

Deno.test("result parity: a plain job", async () => {
  const result = assertSame(
    await bothWays(
      `name: plain\n${model}system: Be brief.\nprompt: Say hi\n`,
      "- content: Hi there.\n",
      "Say hi",
    ),
  );
  assert.equal(result.status, "success");
  assert.equal(result.final, "Hi there.");
  assert.equal(result.turns, 1);
  assert.equal(result.output, null);
});

Deno.test("result parity: a job whose model calls a tool (read_file)", async () => {
  const job = `name: reader\n${model}prompt: What is in notes.txt?\ntools:\n  read_file: { paths: ["."] }\n`;
  const replies = `- tool_calls: [{ name: read_file, arguments: { path: notes.txt } }]\n` +
    `- content: It lists alpha and beta.\n`;
  const result = assertSame(await bothWays(job, replies, "What is in notes.txt?"));
  assert.equal(result.status, "success");
  assert.equal(result.final, "It lists alpha and beta.");
  assert.equal(result.turns, 2);
  const usage = result.usage as { prompt_tokens: number; completion_tokens: number };
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
});

Deno.test("result parity: an output.schema job is checked, repaired once, and returns the parsed output", async () => {
  const replies = `- content: 'not json'\n- content: '{"labels": ["bug"]}'\n`;
  const result = assertSame(await bothWays(SCHEMA_JOB, replies, "Labels please"));
  assert.equal(result.status, "success");
  assert.deepEqual(result.output, { labels: ["bug"] });
  assert.equal(result.turns, 2, "the answer and its one repair");
});

Deno.test("result parity: an output.schema job whose repair still misses fails with schema_mismatch", async () => {
  const replies = `- content: '{"labels": 1}'\n- content: 'still wrong'\n`;
  const result = assertSame(await bothWays(SCHEMA_JOB, replies, "Labels please"));
  assert.equal(result.status, "failed");
  assert.equal(result.terminal_reason, "schema_mismatch");
  assert.equal(result.exit_code, 1);
  assert.equal(result.output, null);
});

Deno.test("result parity: a limit hit (max_turns: 1, the model asks for a tool)", async () => {
  const job = `name: limited\n${model}prompt: Read notes.txt\nlimits: { max_turns: 1 }\n` +
    `tools:\n  read_file: { paths: ["."] }\n`;
  const replies =
    `- tool_calls: [{ name: read_file, arguments: { path: notes.txt } }]\n- content: never sent\n`;
  const result = assertSame(await bothWays(job, replies, "Read notes.txt"));
  assert.equal(result.status, "limit");
  assert.equal(result.terminal_reason, "max_turns");
  assert.equal(result.exit_code, 3);
  assert.equal(result.turns, 1);
  assert.match(String(result.error), /limits\.max_turns is 1/);
});

Deno.test("rpc: on an output.schema job a slash command's output is not an answer: no check, no repair", async () => {
  const dir = await writeFiles(await tempDir("hermes-parity-"), {
    "job.yaml": SCHEMA_JOB,
    "replies.yaml": `- content: '{"labels": []}'\n`,
  });
  await using client = new RpcClient({ home: dir, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  const session_id = (created.result as { session_id: string }).session_id;
  const slash: [string, Record<string, string>][] = [
    ["session.command", { command: "/status" }],
    ["session.prompt", { text: "/status" }],
  ];
  for (const [method, params] of slash) {
    const status = (await client.request(method, { session_id, ...params })).result as Result;
    assert.equal(status.status, "success", JSON.stringify(status));
    assert.match(String(status.final), /turns this run: 0/);
    assert.equal(status.output, null);
    assert.equal(status.turns, 0, "no repair turn");
  }
  // The scripted reply was left for the first prompt, which is checked.
  const answer = (await client.request("session.prompt", { session_id, text: "Labels please" }))
    .result as Result;
  assert.deepEqual(answer.output, { labels: [] });
  assert.equal((await client.finish()).code, 0);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("result parity: SIGINT during a model call ends it as interrupted, exit 130, both ways", async () => {
  const dir = await writeFiles(await tempDir("hermes-parity-"), {
    "job.yaml": `name: slow\n${model}prompt: Take your time\n`,
    "replies.yaml": "- { content: never, delay: 60s }\n",
  });
  const child = spawnHermes(["run", "job.yaml", "--output", "stream-json"], {
    cwd: dir,
    home: `${dir}/home-run`,
  });
  const lines: Result[] = [];
  for await (const line of child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())) {
    lines.push(JSON.parse(line));
    if (lines.at(-1)!.type === "turn.start") child.kill("SIGINT");
  }
  const [status] = await Promise.all([child.status, new Response(child.stderr).text()]);
  // The last stream-json event is the result object, in an event's envelope.
  const { seq: _seq, ts: _ts, ...run } = lines.at(-1)!;
  assert.equal(run.type, "result");
  assert.equal(status.code, 130);

  await using client = new RpcClient({ home: `${dir}/home-rpc`, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  const session_id = (created.result as { session_id: string }).session_id;
  const prompted = client.request("session.prompt", { session_id, text: "Take your time" });
  await client.waitFor((m) => (m as RpcMessage).params?.type === "turn.start");
  client.child.kill("SIGINT");
  const rpc = (await prompted).result as Result;
  await client.finish();
  await Deno.remove(dir, { recursive: true });

  const { error: runError, ...runRest } = comparable(run);
  const { error: rpcError, ...rpcRest } = comparable(rpc);
  assert.deepEqual(rpcRest, runRest);
  assert.equal(runRest.status, "interrupted");
  assert.equal(runRest.terminal_reason, "interrupted");
  assert.equal(runRest.exit_code, 130);
  assert.equal(runError, "The run was interrupted");
  assert.equal(rpcError, "The server was interrupted");
});
