/**
 * A stored session is held to the trust policy in force when it is used again, not only to the one it was
 * admitted under: `hermes run --resume` (with `--policy` or `--untrusted`), `sessions compact` and an RPC
 * prompt to a stored session re-judge the stored job before any model call — exit 2 (RPC: job invalid)
 * naming the session, the key and the rule — and a stored job within today's policy resumes. Real CLI and a
 * scripted OpenAI server that counts requests.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient } from "../_testing/rpc_client.ts";
import { type OpenAIServer, startOpenAIServer } from "../_testing/openai_server.ts";

const KEY = { TEST_KEY: "sk-test-123456" };

/** A project whose job names the server's endpoint itself and asks for 50 turns; its first run's session id. */
async function storedSession(server: OpenAIServer): Promise<{ dir: string; id: string }> {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: stored
model: { provider: openai, name: m, base_url: "${server.url}", api_key_env: TEST_KEY }
prompt: hi
limits: { max_turns: 50 }
`,
    "tight.yaml": "limits: { max_turns: 10 }\n",
    "loose.yaml": "limits: { max_turns: 100 }\n",
  });
  const first = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env: KEY });
  assert.equal(first.code, 0, first.stderr);
  return { dir, id: JSON.parse(first.stdout).session_id };
}

Deno.test("run --resume: a stored job beyond today's policy is exit 2 before any model call; within it, it resumes", async () => {
  const server = await startOpenAIServer([{ content: "first" }, { content: "resumed" }]);
  try {
    const { dir, id } = await storedSession(server);
    assert.equal(server.requests.length, 1);
    const refused = await hermes(["--policy", "tight.yaml", "run", "--resume", id, "-p", "again"], {
      cwd: dir,
      home: dir,
      env: KEY,
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(
      refused.stderr.trimEnd(),
      `hermes: session ${id}: limits.max_turns: refused by policy tight.yaml (limits.max_turns at ` +
        "tight.yaml:1:22): 50 is above the ceiling 10",
    );
    assert.equal(server.requests.length, 1, "no model call");
    const allowed = await hermes(["--policy", "loose.yaml", "run", "--resume", id, "-p", "again"], {
      cwd: dir,
      home: dir,
      env: KEY,
    });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stdout, "resumed\n");
    assert.equal(server.requests.length, 2);
  } finally {
    await server.close();
  }
});

Deno.test("run --resume --untrusted: the job's own endpoint is refused; config.yaml's endpoint is the host's and resumes", async () => {
  const server = await startOpenAIServer([{ content: "first" }, { content: "own" }, { content: "more" }]);
  try {
    const { dir, id } = await storedSession(server);
    const refused = await hermes(["run", "--resume", id, "-p", "again", "--untrusted"], {
      cwd: dir,
      home: dir,
      env: KEY,
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.deepEqual(refused.stderr.trimEnd().split("\n"), [
      `hermes: session ${id}: model.base_url: refused by --untrusted (models.base_urls): ${server.url} is not ` +
      "allowed (allowed: nothing)",
      `hermes: session ${id}: model.api_key_env: refused by --untrusted (models.api_key_envs): TEST_KEY is not ` +
      "allowed (allowed: nothing)",
    ]);
    assert.equal(server.requests.length, 1, "no model call");
    // The same endpoint from config.yaml: the policy judges the job file's part only, also when resuming.
    await writeFiles(dir, {
      "config.yaml":
        `model: { provider: openai, name: m, base_url: "${server.url}", api_key_env: TEST_KEY }\n`,
      "own.yaml": "name: own\nmodel: { name: m }\nprompt: hi\n",
    });
    const own = await hermes(["run", "own.yaml", "--untrusted", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: KEY,
    });
    assert.equal(own.code, 0, own.stderr);
    const resumed = await hermes(
      ["run", "--resume", JSON.parse(own.stdout).session_id, "-p", "more", "--untrusted"],
      { cwd: dir, home: dir, env: KEY },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, "more\n");
    assert.equal(server.requests.length, 3);
  } finally {
    await server.close();
  }
});

Deno.test("rpc: a prompt to a stored session beyond today's policy is refused (job invalid); within it, it runs", async () => {
  const server = await startOpenAIServer([{ content: "first" }, { content: "over rpc" }]);
  try {
    const { dir, id } = await storedSession(server);
    {
      await using client = new RpcClient({ home: dir, cwd: dir, args: ["--policy", "tight.yaml"], env: KEY });
      const reply = await client.request("session.prompt", { session_id: id, text: "again" });
      assert.equal(reply.error?.code, -32004, JSON.stringify(reply));
      assert.match(
        reply.error!.message,
        new RegExp(
          `session ${id}: limits\\.max_turns: refused by policy tight\\.yaml \\(limits\\.max_turns at`,
        ),
      );
      assert.equal(server.requests.length, 1, "no model call");
    }
    await using client = new RpcClient({ home: dir, cwd: dir, args: ["--policy", "loose.yaml"], env: KEY });
    const reply = await client.request("session.prompt", { session_id: id, text: "again" });
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    assert.equal(server.requests.length, 2);
  } finally {
    await server.close();
  }
});

Deno.test("sessions compact: a stored job beyond today's policy is exit 2 before its plugins or model start", async () => {
  const server = await startOpenAIServer([{ content: "first" }]);
  try {
    const { dir, id } = await storedSession(server);
    const refused = await hermes(["--policy", "tight.yaml", "sessions", "compact", id], {
      cwd: dir,
      home: dir,
      env: KEY,
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(`^hermes: session ${id}: limits\\.max_turns: refused by policy tight\\.yaml`),
    );
    const allowed = await hermes(["--policy", "loose.yaml", "sessions", "compact", id], {
      cwd: dir,
      home: dir,
      env: KEY,
    });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /nothing compacted/);
    assert.equal(server.requests.length, 1);
  } finally {
    await server.close();
  }
});
