/** `hermes rpc` end to end: a real subprocess, real store, scripted model, JSON-RPC over pipes. */
import assert from "node:assert/strict";
import { ROOT, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient, type RpcMessage } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const JOB = `name: rpcjob
model: { provider: scripted, script: ./replies.yaml }
system: You are terse.
tools:
  shell: { allow: ["echo *"], timeout: 10s }
`;

async function jobDir(replies: string, job = JOB): Promise<string> {
  return await writeFiles(await tempDir("hermes-rpc-"), { "job.yaml": job, "replies.yaml": replies });
}

type Event = Record<string, unknown>;

function result(message: RpcMessage): Record<string, unknown> {
  assert.equal(message.error, undefined, JSON.stringify(message.error));
  return message.result as Record<string, unknown>;
}

async function create(
  client: RpcClient,
  params: Record<string, unknown> = { job: "job.yaml" },
): Promise<string> {
  return result(await client.request("session.create", params)).session_id as string;
}

Deno.test({
  name: "rpc: a session from a job runs a scripted tool call; ordered events arrive before the result",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir(`- tool_calls: [{ name: shell, arguments: { command: "echo hello-from-shell" } }]
- content: The shell said hello.
`);
  await using client = new RpcClient({ home: dir, cwd: dir });
  const id = await create(client);
  const response = await client.request("session.prompt", { session_id: id, text: "Say hello" });
  const turn = result(response);
  assert.equal(turn.type, "result");
  assert.equal(turn.status, "success");
  assert.equal(turn.exit_code, 0);
  assert.equal(turn.session_id, id);
  assert.equal(turn.job, "rpcjob");
  assert.equal(turn.final, "The shell said hello.");
  assert.equal(turn.turns, 2);
  assert.equal(turn.terminal_reason, "completed");
  assert.equal(turn.error, null);
  const usage = turn.usage as { prompt_tokens: number; completion_tokens: number };
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);

  const events = client.events(id);
  const seqs = events.map((e) => e.seq as number);
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  assert.equal(new Set(seqs).size, seqs.length);
  // Where no memory cgroup can be made (a non-root user), the session says its memory cap is per process.
  for (const notice of events.filter((e) => e.type === "sandbox")) {
    assert.deepEqual([notice.mode, notice.memory], ["on", "per_process"]);
  }
  assert.deepEqual(events.filter((e) => e.type !== "sandbox").map((e) => e.type), [
    "session.start",
    "message",
    "turn.start",
    "message",
    "turn.end",
    "tool.call",
    "tool.result",
    "turn.start",
    "message",
    "turn.end",
  ]);
  const toolResult = events.find((e) => e.type === "tool.result")!;
  assert.equal(toolResult.status, "ok");
  assert.equal(toolResult.content, "hello-from-shell\n");
  const responseAt = client.lines.indexOf(response);
  const lastEventAt = client.lines.findLastIndex((m) => (m as RpcMessage).method === "event");
  assert.ok(lastEventAt < responseAt, "every event of the turn precedes its result");

  const got = result(await client.request("session.get", { session_id: id }));
  const roles = (got.messages as { role: string }[]).map((m) => m.role);
  assert.deepEqual(roles, ["system", "user", "assistant", "tool", "assistant"]);
  assert.equal(got.live, true);
  const occupancy = got.occupancy as { tokens: number; threshold_tokens: number; occupancy: number };
  assert.ok(occupancy.tokens > 0 && occupancy.threshold_tokens > 0, JSON.stringify(occupancy));
  assert.equal(occupancy.occupancy, occupancy.tokens / occupancy.threshold_tokens);
  const list = result(await client.request("session.list")).sessions as { id: string; live: boolean }[];
  assert.deepEqual(list.map((s) => [s.id, s.live]), [[id, true]]);
  const { code } = await client.finish();
  assert.equal(code, 0);
  const end = client.events(id).at(-1)!;
  assert.equal(end.type, "session.end");
  assert.equal(end.status, "success");
});

Deno.test({
  name: "rpc: two sessions prompted concurrently both finish, and turns of one session are queued",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir(`- { match: alpha, delay: 400ms, content: alpha done }
- { match: beta, delay: 400ms, content: beta done }
- { match: first, delay: 300ms, content: first done }
- { match: second, content: second done }
`);
  await using client = new RpcClient({ home: dir, cwd: dir });
  const [a, b] = await Promise.all([create(client), create(client)]);
  const [ra, rb] = await Promise.all([
    client.request("session.prompt", { session_id: a, text: "alpha" }),
    client.request("session.prompt", { session_id: b, text: "beta" }),
  ]);
  assert.equal(result(ra).final, "alpha done");
  assert.equal(result(rb).final, "beta done");
  // Both turns were running at once: each started before the other one answered.
  const startedB = client.lines.findIndex((m) =>
    (m as RpcMessage).method === "event" &&
    (m as RpcMessage).params!.session_id === b && (m as RpcMessage).params!.type === "turn.start"
  );
  const startedA = client.lines.findIndex((m) =>
    (m as RpcMessage).method === "event" &&
    (m as RpcMessage).params!.session_id === a && (m as RpcMessage).params!.type === "turn.start"
  );
  assert.ok(startedB < client.lines.indexOf(ra) && startedA < client.lines.indexOf(rb));

  const [first, second] = await Promise.all([
    client.request("session.prompt", { session_id: a, text: "first" }),
    client.request("session.prompt", { session_id: a, text: "second" }),
  ]);
  assert.equal(result(first).final, "first done");
  assert.equal(result(second).final, "second done");
  const order = client.events(a).filter((e) => e.type === "message").map((e) => e.content);
  assert.deepEqual(order.slice(-4), ["first", "first done", "second", "second done"]);
  assert.equal((await client.finish()).code, 0);
});

Deno.test({
  name: "rpc: session.cancel stops the running turn and the session stays usable",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir(`- { match: slow, delay: 60s, content: never }
- { match: again, content: back again }
`);
  await using client = new RpcClient({ home: dir, cwd: dir });
  const id = await create(client);
  const prompt = client.request("session.prompt", { session_id: id, text: "slow one" });
  await client.waitFor((m) => (m as RpcMessage).params?.type === "turn.start");
  const cancel = result(await client.request("session.cancel", { session_id: id }));
  assert.deepEqual(cancel, { session_id: id, cancelled: 1 });
  const answer = await prompt;
  assert.equal(answer.error?.code, -32003);
  const data = answer.error?.data as { result: Record<string, unknown> };
  assert.equal(data.result.status, "interrupted");
  assert.equal(data.result.terminal_reason, "cancelled");
  assert.equal(
    result(await client.request("session.prompt", { session_id: id, text: "again" })).final,
    "back again",
  );
  const idle = result(await client.request("session.cancel", { session_id: id }));
  assert.equal(idle.cancelled, 0);
  assert.equal((await client.finish()).code, 0);
});

Deno.test({
  name: "rpc: each error class answers with its code and the server stays up",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir("- content: fine\n");
  await writeFiles(dir, {
    "bad.yaml": "name: bad\nmodel: { provider: scripted, script: ./replies.yaml }\npromt: hi\n",
  });
  await using client = new RpcClient({ home: dir, cwd: dir, args: ["--max-line", "4KiB"] });
  const alive = async () => assert.deepEqual(result(await client.request("ping")), {});

  await client.write("this is not json\n");
  const parse = await client.waitFor((m) => (m as RpcMessage).error?.code === -32700) as RpcMessage;
  assert.equal(parse.id, null);
  await alive();

  await client.send({ jsonrpc: "1.0", id: "v", method: "ping" });
  assert.equal((await client.waitFor((m) => (m as RpcMessage).id === "v") as RpcMessage).error?.code, -32600);
  await client.send({ jsonrpc: "2.0", id: { no: 1 }, method: "ping" });
  await client.send(42);
  await client.waitFor((m) =>
    client.lines.filter((l) => (l as RpcMessage).error?.code === -32600).length >= 3 && !!m
  );
  await alive();

  assert.equal((await client.request("no.such.method")).error?.code, -32601);
  await alive();

  const missing = await client.request("session.prompt", { text: "hi" });
  assert.equal(missing.error?.code, -32602);
  assert.equal((missing.error?.data as { path: string }).path, "session_id");
  const unknown = await client.request("session.get", { session_id: "x", verbose: true });
  assert.equal(unknown.error?.code, -32602);
  assert.equal((unknown.error?.data as { path: string }).path, "verbose");
  const wrongType = await client.request("session.create", { job: "job.yaml", inputs: { days: [1] } });
  assert.equal((wrongType.error?.data as { path: string }).path, "inputs.days");
  const positional = await client.request("session.get", ["x"]);
  assert.equal(positional.error?.code, -32602);
  await alive();

  const notFound = await client.request("session.prompt", {
    session_id: "19990101-000000-abcdef",
    text: "hi",
  });
  assert.equal(notFound.error?.code, -32001);
  await alive();

  const badJob = await client.request("session.create", { job: "bad.yaml" });
  assert.equal(badJob.error?.code, -32004);
  assert.match(badJob.error!.message, /bad\.yaml:3:1/);
  const badInline = await client.request("job.run", { job: { name: "Bad Name" } });
  assert.equal(badInline.error?.code, -32004);
  assert.match(badInline.error!.message, /name/);
  await alive();

  const id = await create(client);
  const unknownCommand = await client.request("session.command", { session_id: id, command: "/nope" });
  assert.equal(unknownCommand.error?.code, -32004);
  assert.match(unknownCommand.error!.message, /\/status/);
  const notSlash = await client.request("session.command", { session_id: id, command: "status" });
  assert.equal((notSlash.error?.data as { path: string }).path, "command");
  const status = result(await client.request("session.command", { session_id: id, command: "/status" }));
  assert.match(status.final as string, new RegExp(`session ${id}`));

  await client.write(`{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"${"x".repeat(8000)}"}}\n`);
  const big = await client.waitFor((m) =>
    (m as RpcMessage).error?.code === -32600 &&
    (m as RpcMessage).error?.message.includes("size limit") === true
  ) as RpcMessage;
  assert.equal(big.id, null);
  assert.equal((big.error?.data as { limit_bytes: number }).limit_bytes, 4096);
  await alive();

  await client.send([
    { jsonrpc: "2.0", id: "b1", method: "ping" },
    { jsonrpc: "2.0", method: "ping" },
    { jsonrpc: "2.0", id: "b2", method: "nope" },
  ]);
  const batch = await client.waitFor((m) => Array.isArray(m)) as RpcMessage[];
  assert.deepEqual(batch.map((m) => [m.id, m.error?.code ?? "ok"]), [["b1", "ok"], ["b2", -32601]]);
  await client.write("[]\n");
  await client.waitFor((m) => (m as RpcMessage).error?.message === "Invalid request: empty batch");
  await client.send({ jsonrpc: "2.0", method: "ping" });
  await alive();

  const valid = result(await client.request("job.validate", { path: "job.yaml" }));
  assert.deepEqual(valid, { valid: true, name: "rpcjob" });
  const invalid = result(await client.request("job.validate", { path: "bad.yaml" }));
  assert.equal(invalid.valid, false);
  assert.match(invalid.error as string, /promt/);

  const { code } = await client.finish();
  assert.equal(code, 0);
  // Notifications got no response: the only id-less (null) answers are the five errors that cannot name one
  // (parse error, object id, non-object request, oversized line, empty batch).
  const responses = client.lines.filter((m) => !Array.isArray(m) && (m as RpcMessage).method === undefined);
  assert.equal(responses.filter((m) => (m as RpcMessage).id === null).length, 5);
});

Deno.test({
  name: "rpc: EOF with work in flight delivers every response, then exits 0",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir(`- { match: slow, delay: 500ms, content: slow answer }
- { match: run, delay: 300ms, content: job answer }
`);
  await using client = new RpcClient({ home: dir, cwd: dir });
  const id = await create(client);
  await client.write(
    JSON.stringify({
      jsonrpc: "2.0",
      id: "p",
      method: "session.prompt",
      params: { session_id: id, text: "slow" },
    }) +
      "\n" +
      JSON.stringify({
        jsonrpc: "2.0",
        id: "j",
        method: "job.run",
        params: { path: "job.yaml", prompt: "run it" },
      }) +
      "\n" + JSON.stringify({ jsonrpc: "2.0", id: "ping", method: "ping" }) + "\n",
  );
  const { code } = await client.finish();
  assert.equal(code, 0);
  const byId = (id: string) => client.lines.find((m) => (m as RpcMessage).id === id) as RpcMessage;
  assert.equal((byId("p").result as { final: string }).final, "slow answer");
  assert.equal((byId("j").result as { final: string; status: string }).final, "job answer");
  assert.deepEqual(byId("ping").result, {});
});

Deno.test({
  name: "rpc: shutdown finishes in-flight requests, answers last and exits 0 with stdin still open",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir("- { delay: 300ms, content: done before shutdown }\n");
  await using client = new RpcClient({ home: dir, cwd: dir });
  await client.write(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "job.run", params: { path: "job.yaml", prompt: "go" } }) +
      "\n" +
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "shutdown" }) + "\n",
  );
  const status = await client.child.status;
  assert.equal(status.code, 0);
  await client.finish();
  const ids = client.lines.filter((m) => (m as RpcMessage).id !== undefined).map((m) => (m as RpcMessage).id);
  assert.deepEqual(ids, [1, 2]);
  const run = client.lines.find((m) => (m as RpcMessage).id === 1) as RpcMessage;
  assert.equal((run.result as { status: string }).status, "success");
});

Deno.test(
  { name: "rpc: a client that closes our stdout does not hang the process", ignore: withoutSandbox },
  async () => {
    const dir = await jobDir("- { delay: 60s, content: never }\n");
    await using client = new RpcClient({ home: dir, cwd: dir });
    const id = await create(client);
    await client.send({
      jsonrpc: "2.0",
      id: "slow",
      method: "session.prompt",
      params: { session_id: id, text: "x" },
    });
    await client.waitFor((m) => (m as RpcMessage).params?.type === "turn.start");
    await client.closeStdout();
    // Keep writing: the next response fails with BrokenPipe and the server stops, interrupting the turn.
    const status = client.child.status;
    let exited = false;
    status.then(() => exited = true);
    for (let i = 0; i < 200 && !exited; i++) {
      await client.send({ jsonrpc: "2.0", id: i, method: "ping" }).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(exited, "the server exited after its stdout was closed");
    assert.equal((await status).code, 0);
  },
);

Deno.test({
  name: "rpc: a stored session is resumed on demand; delete and archive act on sessions",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir(`- { match: first, content: first answer }
- { match: later, content: later answer }
- { match: other, content: other answer }
`);
  let stored: string;
  {
    await using first = new RpcClient({ home: dir, cwd: dir });
    const run = result(await first.request("job.run", { path: "job.yaml", prompt: "first" }));
    assert.equal(run.final, "first answer");
    stored = run.session_id as string;
    assert.equal((await first.finish()).code, 0);
  }
  await using client = new RpcClient({ home: dir, cwd: dir });
  const later = result(await client.request("session.prompt", { session_id: stored, text: "later" }));
  assert.equal(later.final, "later answer");
  assert.equal(later.session_id, stored);
  const start = client.events(stored).find((e) => e.type === "session.start")!;
  assert.equal(start.resumed, true);
  const got = result(await client.request("session.get", { session_id: stored }));
  assert.equal(typeof (got.occupancy as { occupancy: number }).occupancy, "number", "a resumed session too");
  assert.deepEqual((got.messages as { content: string }[]).filter((_, i) => i > 0).map((m) => m.content), [
    "first",
    "first answer",
    "later",
    "later answer",
  ]);

  const other = await create(client);
  result(await client.request("session.prompt", { session_id: other, text: "other" }));
  const archived = result(await client.request("session.archive", { session_id: other }));
  assert.deepEqual(archived, { archived: [other], unchanged: [] });
  const listed = result(await client.request("session.list")).sessions as { id: string }[];
  assert.deepEqual(listed.map((s) => s.id), [stored]);
  const deleted = result(await client.request("session.delete", { session_id: stored }));
  assert.deepEqual(deleted, { deleted: [stored] });
  assert.equal((await client.request("session.get", { session_id: stored })).error?.code, -32001);
  assert.equal((await client.finish()).code, 0);
});

Deno.test({
  name: "rpc: session.compact reports the compaction outcome; delete refuses a session with a running turn",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir(`- { match: hello, content: hi there }
- { match: slow, delay: 60s, content: never }
`);
  await using client = new RpcClient({ home: dir, cwd: dir });
  const id = await create(client);
  result(await client.request("session.prompt", { session_id: id, text: "hello" }));
  const compact = result(await client.request("session.compact", { session_id: id, focus: "greetings" }));
  assert.equal(compact.session_id, id);
  assert.equal(typeof compact.changed, "boolean");
  assert.equal(typeof compact.before_tokens, "number");
  assert.equal((await client.request("session.compact", { session_id: "nope-nope" })).error?.code, -32001);

  const slow = client.request("session.prompt", { session_id: id, text: "slow" });
  await client.waitFor((m) =>
    (m as RpcMessage).params?.type === "turn.start" &&
    client.events(id).filter((e) => e.type === "turn.start").length === 2
  );
  const busy = await client.request("session.delete", { session_id: id });
  assert.equal(busy.error?.code, -32002);
  await client.request("session.cancel", { session_id: id });
  assert.equal((await slow).error?.code, -32003);
  assert.deepEqual(result(await client.request("session.delete", { session_id: id })), { deleted: [id] });
  assert.equal((await client.finish()).code, 0);
});

Deno.test("rpc: /loop through session.command keeps ticking in the background; EOF stops an endless one", async () => {
  const job = `name: loopjob
model: { provider: scripted, script: ./replies.yaml }
loops: { min_interval: 1s }
`;
  const dir = await jobDir(
    `- { match: "tick 1 of 3", content: one }
- { match: "tick 2 of 3", content: two }
- { match: "tick 3 of 3", content: three }
- { match: hourly, content: first hourly tick }
`,
    job,
  );
  await using client = new RpcClient({ home: dir, cwd: dir });
  const id = await create(client);
  const started = result(
    await client.request("session.command", { session_id: id, command: "/loop 1s check --times 3" }),
  );
  assert.match(started.final as string, /Loop started/);
  assert.match(started.final as string, /one/);
  const end = await client.waitFor((m) => (m as RpcMessage).params?.type === "loop.end") as RpcMessage;
  assert.equal(end.params!.reason, "times");
  assert.equal(end.params!.ticks, 3);
  const ticks = client.events(id).filter((e) => e.type === "loop.tick").map((e) => e.tick);
  assert.deepEqual(ticks, [1, 2, 3]);
  const replies = client.events(id).filter((e) => e.type === "message" && e.role === "assistant").map((e) =>
    e.content
  );
  assert.deepEqual(replies, ["one", "two", "three"]);

  const hourly = await create(client);
  const first = result(
    await client.request("session.command", { session_id: hourly, command: "/loop 1h hourly" }),
  );
  assert.match(first.final as string, /Next tick in/);
  assert.equal((await client.finish()).code, 0);
});

Deno.test({
  name: "rpc: a turn that hits a limit or fails is a result with its status, not an error",
  ignore: withoutSandbox,
}, async () => {
  const job = `${JOB}limits: { max_turns: 1 }\n`;
  const dir = await jobDir(`- tool_calls: [{ name: shell, arguments: { command: "echo once" } }]\n`, job);
  await using client = new RpcClient({ home: dir, cwd: dir });
  const id = await create(client);
  const limited = result(await client.request("session.prompt", { session_id: id, text: "loop forever" }));
  assert.equal(limited.status, "limit");
  assert.equal(limited.exit_code, 3);
  assert.equal(limited.terminal_reason, "max_turns");
  assert.equal(limited.turns, 1);

  await writeFiles(dir, { "none.yaml": "- { match: never-asked, content: unused }\n" });
  const other = await create(client, {
    job: { name: "inline", model: { provider: "scripted", script: "./none.yaml" } },
  });
  const failed = result(
    await client.request("session.prompt", { session_id: other, text: "no replies left" }),
  );
  assert.equal(failed.status, "failed");
  assert.equal(failed.exit_code, 1);
  assert.match(failed.error as string, /scripted replies are used up/);
  assert.equal((await client.finish()).code, 0);
});

Deno.test({
  name: "rpc: plugins.list reports what each session's plugins registered",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: withplugin
model: { provider: scripted, script: ./replies.yaml }
plugins:
  - path: ${ROOT}/examples/plugins/whoami.ts
`,
    "replies.yaml": "- content: hi\n",
  });
  await using client = new RpcClient({ home: dir, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  const id = (created.result as { session_id: string }).session_id;
  const listed = (await client.request("plugins.list", {})).result as {
    sessions: { session_id: string; plugins: { name: string; commands: { name: string }[] }[] }[];
  };
  const mine = listed.sessions.find((s) => s.session_id === id)!;
  assert.deepEqual(mine.plugins.map((p) => [p.name, p.commands.map((c) => c.name)]), [["whoami", [
    "whoami",
  ]]]);
  const command = await client.request("session.command", { session_id: id, command: "/whoami" });
  assert.match(JSON.stringify(command.result), /via rpc/);
});
