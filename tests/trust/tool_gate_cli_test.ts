/**
 * The tool gate through real subprocesses: every approver a call outside the job's allow-lists can meet —
 * the job's approval command and url, an RPC client, none (the ACP editor: tests/acp/acp_cli_test.ts) — both
 * allowing and denying, and plugin tools under their entry's rules.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient, type RpcMessage } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

/** A job reading two files outside its read_file root (`yes.txt`, `no.txt`) and one inside it. */
async function readingJob(approval: string, extra: Record<string, string> = {}) {
  const dir = await tempDir("hermes-gate-");
  const outside = await tempDir("hermes-gate-outside-");
  await writeFiles(outside, { "yes.txt": "approved text", "no.txt": "refused text" });
  await writeFiles(dir, {
    "in/a.txt": "inside text",
    "job.yaml": `name: gate
model: { provider: scripted, script: ./r.yaml }
prompt: go
tools: { read_file: { paths: [./in] } }
${approval}`,
    "r.yaml": `- tool_calls: [{ name: read_file, arguments: { path: "${outside}/yes.txt" } }]
- tool_calls: [{ name: read_file, arguments: { path: "${outside}/no.txt" } }]
- tool_calls: [{ name: read_file, arguments: { path: in/a.txt } }]
- content: done
`,
    ...extra,
  });
  const cleanup = async () => {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  };
  return { dir, outside, cleanup };
}

type Event = Record<string, unknown>;
const results = (events: Event[]) => events.filter((e) => e.type === "tool.result");

Deno.test("gate: the job's approval command gets the call as JSON on stdin; allow runs it, deny does not", async () => {
  const { dir, outside, cleanup } = await readingJob(
    "approval: { command: [./approve.sh], timeout: 10s }\n",
    {
      "approve.sh": `#!/bin/sh
input=$(cat)
printf '%s\\n' "$input" >> asked.jsonl
case "$input" in *yes.txt*) echo allow ;; *) echo '{"decision": "deny"}' ;; esac
`,
    },
  );
  try {
    await Deno.chmod(`${dir}/approve.sh`, 0o755);
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [yes, no, inside] = results(events);
    assert.deepEqual([yes!.status, yes!.content], ["ok", "approved text"]);
    assert.equal(no!.status, "denied");
    assert.match(
      String(no!.content),
      /outside tools\.read_file\.paths: the approval command rejected the call; to allow such calls without asking, add tools\.read_file\.paths: \[".*"\] to the job/,
    );
    assert.ok(events.some((e) => e.type === "tool.denied" && e.tool_call_id === no!.tool_call_id));
    assert.deepEqual([inside!.status, inside!.content], ["ok", "inside text"]);
    const asked = (await Deno.readTextFile(`${dir}/asked.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(asked.length, 2, "only the calls outside the rules are asked about");
    assert.equal(asked[0].job, "gate");
    assert.equal(asked[0].tool, "read_file");
    assert.deepEqual(asked[0].args, { path: `${outside}/yes.txt` });
    assert.equal(asked[0].session_id, events[0]!.session_id);
    assert.match(asked[0].reason, /is outside tools\.read_file\.paths/);
    assert.match(asked[0].rule, /^tools\.read_file\.paths: \[/);
  } finally {
    await cleanup();
  }
});

Deno.test("gate: an approval command that does not answer within its timeout is a deny", async () => {
  const { dir, cleanup } = await readingJob("approval: { command: [./slow.sh], timeout: 1s }\n", {
    "slow.sh": "#!/bin/sh\nexec sleep 30\n",
  });
  try {
    await Deno.chmod(`${dir}/slow.sh`, 0o755);
    const started = Date.now();
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    assert.deepEqual(results(events).map((r) => r.status), ["denied", "denied", "ok"]);
    assert.ok(Date.now() - started < 25_000, "the run does not wait for the approver past its timeout");
  } finally {
    await cleanup();
  }
});

Deno.test("gate: the job's approval url gets a POST of the call; allow runs it, anything else denies", async () => {
  const bodies: Record<string, unknown>[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
    const body = await request.json();
    bodies.push({ ...body, method: request.method, type: request.headers.get("content-type") });
    return String(body.args?.path).endsWith("yes.txt")
      ? Response.json({ decision: "allow" })
      : new Response("deny");
  });
  const url = `http://127.0.0.1:${server.addr.port}/approve`;
  const { dir, cleanup } = await readingJob(`approval: { url: "${url}" }\n`);
  try {
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [yes, no, inside] = results(events);
    assert.deepEqual([yes!.status, yes!.content], ["ok", "approved text"]);
    assert.equal(no!.status, "denied");
    assert.match(String(no!.content), /the approval url rejected the call/);
    assert.equal(inside!.status, "ok");
    assert.equal(bodies.length, 2);
    assert.equal(bodies[0]!.method, "POST");
    assert.equal(bodies[0]!.type, "application/json");
    assert.equal(bodies[0]!.tool, "read_file");
  } finally {
    await server.shutdown();
    await cleanup();
  }
});

Deno.test("gate: an approval url that does not answer within its timeout is a deny", async () => {
  const release = Promise.withResolvers<void>();
  let asked = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
    asked++;
    await request.body?.cancel();
    await release.promise;
    return new Response("allow");
  });
  const url = `http://127.0.0.1:${server.addr.port}/slow`;
  const { dir, cleanup } = await readingJob(`approval: { url: "${url}", timeout: 1s }\n`);
  try {
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    assert.deepEqual(results(events).map((r) => r.status), ["denied", "denied", "ok"]);
    assert.equal(asked, 2, "each call outside the rules was posted, and the late answers did not count");
  } finally {
    release.resolve();
    await server.shutdown();
    await cleanup();
  }
});

Deno.test("gate: without an approver a call outside the rules is denied with the rule to add", async () => {
  const { dir, outside, cleanup } = await readingJob("");
  try {
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [yes, no, inside] = results(events);
    for (const denied of [yes!, no!]) {
      assert.equal(denied.status, "denied");
      assert.match(
        String(denied.content),
        /; to allow it, add tools\.read_file\.paths: \[".*"\] to the job, or name an approver \(approval: \{command \| url\}\)$/,
      );
    }
    assert.ok(!JSON.stringify(events).includes("approved text"), "nothing outside the root was read");
    assert.deepEqual([inside!.status, inside!.content], ["ok", "inside text"]);
    assert.ok(String(yes!.content).includes(await Deno.realPath(outside)));
  } finally {
    await cleanup();
  }
});

Deno.test("gate: approval with both command and url is exit 2 naming the key", async () => {
  const { dir, cleanup } = await readingJob('approval: { command: [./a.sh], url: "http://127.0.0.1:1/" }\n');
  try {
    const { code, stderr } = await hermes(["validate", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(code, 2);
    assert.match(stderr, /approval.*expected exactly one of command, url or api: true/);
  } finally {
    await cleanup();
  }
});

/** Answers each `tool.approve` request of the server with `decide(params)`. */
function approveWith(client: RpcClient, decide: (params: Record<string, unknown>) => string): () => void {
  let stopped = false;
  const seen = new Set<unknown>();
  const loop = async () => {
    while (!stopped) {
      const request = await client.waitFor((line) =>
        (line as RpcMessage).method === "tool.approve" && !seen.has((line as RpcMessage).id)
      ) as RpcMessage;
      if (stopped) return;
      seen.add(request.id);
      await client.send({ jsonrpc: "2.0", id: request.id, result: { decision: decide(request.params!) } });
    }
  };
  void loop();
  return () => {
    stopped = true;
  };
}

Deno.test("gate: hermes rpc asks a client that supports tool.approve; one that does not is never asked", async () => {
  const { dir, outside, cleanup } = await readingJob("");
  try {
    {
      await using client = new RpcClient({ home: dir, cwd: dir });
      const init = await client.request("initialize", { capabilities: { tool_approval: true } });
      assert.ok(init.result);
      const created = await client.request("session.create", { job: "job.yaml" });
      const sessionId = (created.result as { session_id: string }).session_id;
      const stop = approveWith(
        client,
        (params) => String(params.reason).includes("yes.txt") ? "allow" : "deny",
      );
      const prompt = await client.request("session.prompt", { session_id: sessionId, text: "go" });
      stop();
      assert.equal((prompt.result as { status: string }).status, "success", JSON.stringify(prompt));
      const asked = client.lines.filter((l) => (l as RpcMessage).method === "tool.approve") as RpcMessage[];
      assert.equal(asked.length, 2);
      assert.equal(asked[0]!.params!.session_id, sessionId);
      assert.deepEqual(asked[0]!.params!.args, { path: `${outside}/yes.txt` });
      assert.match(String(asked[0]!.params!.rule), /^tools\.read_file\.paths: /);
      const [yes, no, inside] = results(client.events(sessionId));
      assert.deepEqual([yes!.status, yes!.content], ["ok", "approved text"]);
      assert.equal(no!.status, "denied");
      assert.match(String(no!.content), /the client rejected the call/);
      assert.equal(inside!.status, "ok");
      const { code } = await client.finish();
      assert.equal(code, 0);
    }
    {
      await using client = new RpcClient({ home: dir, cwd: dir });
      await client.request("initialize", {});
      const created = await client.request("session.create", { job: "job.yaml" });
      const sessionId = (created.result as { session_id: string }).session_id;
      await client.request("session.prompt", { session_id: sessionId, text: "go" });
      assert.equal(client.lines.filter((l) => (l as RpcMessage).method === "tool.approve").length, 0);
      const [yes, no] = results(client.events(sessionId));
      for (const denied of [yes!, no!]) {
        assert.equal(denied.status, "denied");
        assert.match(String(denied.content), /to allow it, add tools\.read_file\.paths/);
      }
      assert.equal((await client.finish()).code, 0);
    }
  } finally {
    await cleanup();
  }
});

Deno.test({
  name: "gate: a plugin's tools pass the gate: its entry's tools.deny is denied, its other tools run",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir("hermes-gate-plugin-"), {
    "job.yaml": `name: gate-plugin
model: { provider: scripted, script: ./r.yaml }
prompt: go
plugins:
  - path: ./tools.ts
    tools: { deny: ["drop_*"] }
approval: { command: [./approve.sh] }
`,
    "tools.ts": `export function register(ctx) {
  ctx.registerTool("lookup", { description: "look", parameters: { type: "object" }, handler: () => "found" });
  ctx.registerTool("drop_all", { description: "drop", parameters: { type: "object" }, handler: () => "dropped" });
}
`,
    "approve.sh": "#!/bin/sh\ncat > /dev/null\ntouch asked\necho allow\n",
    "r.yaml": `- tool_calls: [{ name: drop_all, arguments: {} }]
- tool_calls: [{ name: lookup, arguments: {} }]
- content: done
`,
  });
  try {
    await Deno.chmod(`${dir}/approve.sh`, 0o755);
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [dropped, looked] = results(events);
    assert.deepEqual([dropped!.status, dropped!.content], [
      "denied",
      'denied: drop_all is denied by plugins[0].tools.deny "drop_*"',
    ]);
    assert.deepEqual([looked!.status, looked!.content], ["ok", "found"]);
    await assert.rejects(Deno.stat(`${dir}/asked`), Deno.errors.NotFound, "a deny rule is never asked about");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
