/** `hermes acp` driven by the real @agentclientprotocol/sdk client over the subprocess's stdio. */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const JOB = `name: acpjob
model: { provider: scripted, script: ./replies.yaml }
tools:
  shell: { allow: ["echo *"], deny: ["rm *"], timeout: 10s }
`;
const REPLIES = `- { match: look, tool_calls: [{ name: shell, arguments: { command: "echo allowed" } }] }
- { match: look, content: all done }
- { match: slow, tool_calls: [{ name: shell, arguments: { command: "echo first" } }] }
- { match: slow, delay: 60s, content: never }
- { match: after, content: still here }
- { match: outside, tool_calls: [{ name: shell, arguments: { command: "printf outside" } }] }
- { match: outside, content: ran it }
- { match: again, tool_calls: [{ name: shell, arguments: { command: "printf rejected-one" } }] }
- { match: again, content: nothing ran }
- { match: forbidden, tool_calls: [{ name: shell, arguments: { command: "rm -rf gone" } }] }
- { match: forbidden, content: refused }
`;

interface Agent {
  child: Deno.ChildProcess;
  updates: acp.SessionNotification[];
  permissions: acp.RequestPermissionRequest[];
  /** What the client answers to the next permission request. */
  answer: { optionId: string };
  stderr: Promise<string>;
}

function spawnAgent(dir: string): Agent {
  const child = spawnHermes(["acp", "--home", dir], { cwd: dir, stdin: "piped" });
  return {
    child,
    updates: [],
    permissions: [],
    answer: { optionId: "allow_once" },
    stderr: new Response(child.stderr).text(),
  };
}

async function withClient<T>(agent: Agent, op: (ctx: acp.ClientContext) => Promise<T>): Promise<T> {
  const client = acp.client({ name: "hermes-test" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      agent.permissions.push(params);
      return { outcome: { outcome: "selected", optionId: agent.answer.optionId } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      agent.updates.push(params);
    });
  try {
    return await client.connectWith(acp.ndJsonStream(agent.child.stdin, agent.child.stdout), op);
  } finally {
    await agent.child.stdin.close().catch(() => {}); // the SDK leaves the pipe open; EOF ends the agent
    const status = await agent.child.status;
    await agent.stderr;
    assert.equal(status.code, 0, "hermes acp exits 0 when the client disconnects");
  }
}

async function until(test: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.ok(test(), "condition reached in time");
}

function kinds(updates: acp.SessionNotification[]): string[] {
  return updates.map((n) => n.update.sessionUpdate);
}

const texts = (updates: acp.SessionNotification[], kind: string) =>
  updates.filter((n) => n.update.sessionUpdate === kind).map((n) =>
    (n.update as { content: { text?: string } }).content.text
  );

async function initialize(ctx: acp.ClientContext): Promise<acp.InitializeResponse> {
  return await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
}

async function newSession(ctx: acp.ClientContext, dir: string): Promise<string> {
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
    cwd: dir,
    mcpServers: [],
    _meta: { hermes: { job: "job.yaml" } },
  });
  return sessionId;
}

async function prompt(ctx: acp.ClientContext, sessionId: string, text: string): Promise<acp.PromptResponse> {
  return await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

async function jobDir(): Promise<string> {
  return await writeFiles(await tempDir("hermes-acp-"), {
    "job.yaml": JOB,
    "replies.yaml": REPLIES,
    "gone/keep.txt": "still here",
  });
}

Deno.test({
  name:
    "acp: initialize, session/new from a job, streamed prompt, commands, cancel, then session/load replays",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir();
  const agent = spawnAgent(dir);
  const sessionId = await withClient(agent, async (ctx) => {
    const init = await initialize(ctx);
    assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
    assert.equal(init.agentCapabilities?.loadSession, true);
    assert.deepEqual(init.agentCapabilities?.promptCapabilities, {
      image: false,
      audio: false,
      embeddedContext: false,
    });
    assert.equal(init.agentInfo?.name, "hermes");

    const sessionId = await newSession(ctx, dir);
    await until(() => kinds(agent.updates).includes("available_commands_update"));
    const commands = agent.updates.find((n) => n.update.sessionUpdate === "available_commands_update")!
      .update as acp.AvailableCommandsUpdate;
    const names = commands.availableCommands.map((c) => c.name);
    for (const name of ["status", "compress", "loop", "heartbeat"]) assert.ok(names.includes(name), name);

    agent.updates.length = 0;
    const first = await prompt(ctx, sessionId, "look around");
    assert.equal(first.stopReason, "end_turn");
    assert.equal((first._meta?.hermes as { result: { status: string } }).result.status, "success");
    assert.ok(agent.updates.every((n) => n.sessionId === sessionId));
    assert.deepEqual(kinds(agent.updates), ["tool_call", "tool_call_update", "agent_message_chunk"]);
    const [call, done] = agent.updates.map((n) => n.update) as (acp.ToolCall & acp.ToolCallUpdate)[];
    assert.equal(call!.kind, "execute");
    assert.equal(call!.title, "shell: echo allowed");
    assert.deepEqual(call!.rawInput, { command: "echo allowed" });
    assert.equal(done!.toolCallId, call!.toolCallId);
    assert.equal(done!.status, "completed");
    assert.deepEqual(done!.content, [{ type: "content", content: { type: "text", text: "allowed\n" } }]);
    assert.deepEqual(texts(agent.updates, "agent_message_chunk"), ["all done"]);
    assert.equal(agent.permissions.length, 0, "an allowed call is not asked about");

    // Cancel while the model is thinking; the session goes on.
    agent.updates.length = 0;
    const slow = prompt(ctx, sessionId, "slow");
    await until(() => kinds(agent.updates).includes("tool_call_update"));
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    assert.equal((await slow).stopReason, "cancelled");
    assert.equal((await prompt(ctx, sessionId, "after")).stopReason, "end_turn");

    // Slash commands are prompts too; their output comes back as a message.
    agent.updates.length = 0;
    assert.equal((await prompt(ctx, sessionId, "/status")).stopReason, "end_turn");
    assert.match(texts(agent.updates, "agent_message_chunk").join(""), new RegExp(`session ${sessionId}`));

    const unknown = await prompt(ctx, "no-such-session", "hi").then(() => null, (error) => error);
    assert.ok(unknown instanceof acp.RequestError);
    assert.equal(unknown.code, -32002);
    const badMeta = await ctx.request(acp.methods.agent.session.new, {
      cwd: dir,
      mcpServers: [],
      _meta: { hermes: { jbo: "job.yaml" } },
    }).then(() => null, (error) => error);
    assert.equal(badMeta?.code, -32602);
    assert.match(badMeta.message, /_meta\.hermes\.jbo/);
    return sessionId;
  });

  // A new process loads the stored session and replays it before answering.
  const again = spawnAgent(dir);
  await withClient(again, async (ctx) => {
    await initialize(ctx);
    await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
    const replay = again.updates.filter((n) => n.update.sessionUpdate !== "available_commands_update");
    assert.ok(replay.every((n) => n.sessionId === sessionId));
    // A slash command is kept in the transcript too: its line and its output (docs/slash-commands.md).
    assert.deepEqual(texts(replay, "user_message_chunk"), ["look around", "slow", "after", "/status"]);
    const answers = texts(replay, "agent_message_chunk");
    assert.deepEqual(answers.slice(0, 2), ["all done", "still here"]);
    assert.equal(answers.length, 3);
    assert.match(answers[2]!, new RegExp(`^session ${sessionId}`));
    const results = replay.filter((n) => n.update.sessionUpdate === "tool_call_update")
      .map((n) => (n.update as acp.ToolCallUpdate).status);
    assert.deepEqual(results, ["completed", "completed"]);
    const missing = await ctx.request(acp.methods.agent.session.load, {
      sessionId: "19990101-000000-abcdef",
      cwd: dir,
      mcpServers: [],
    })
      .then(() => null, (error) => error);
    assert.equal(missing?.code, -32002);
  });
});

Deno.test({
  name: "acp: a tool call outside the allow-lists asks the client: allow once runs it, reject does not",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir();
  const agent = spawnAgent(dir);
  await withClient(agent, async (ctx) => {
    await initialize(ctx);
    const sessionId = await newSession(ctx, dir);

    agent.updates.length = 0;
    assert.equal((await prompt(ctx, sessionId, "outside")).stopReason, "end_turn");
    assert.equal(agent.permissions.length, 1);
    const asked = agent.permissions[0]!;
    const call = agent.updates.find((n) => n.update.sessionUpdate === "tool_call")!.update as acp.ToolCall;
    assert.equal(asked.sessionId, sessionId);
    assert.equal(asked.toolCall.toolCallId, call.toolCallId);
    assert.deepEqual(asked.options.map((o) => o.kind), ["allow_once", "reject_once"]);
    const ran = agent.updates.find((n) => n.update.sessionUpdate === "tool_call_update")!
      .update as acp.ToolCallUpdate;
    assert.equal(ran.status, "completed");
    assert.deepEqual(ran.content, [{ type: "content", content: { type: "text", text: "outside" } }]);

    agent.answer = { optionId: "reject_once" };
    agent.updates.length = 0;
    assert.equal((await prompt(ctx, sessionId, "again")).stopReason, "end_turn");
    assert.equal(agent.permissions.length, 2);
    const rejected = agent.updates.find((n) => n.update.sessionUpdate === "tool_call_update")!
      .update as acp.ToolCallUpdate;
    assert.equal(rejected.status, "failed");
    assert.match(JSON.stringify(rejected.content), /rejected the call/);

    // tools.shell.deny is a prohibition, not an allow-list: the client is not asked and nothing runs.
    agent.answer = { optionId: "allow_once" };
    agent.updates.length = 0;
    assert.equal((await prompt(ctx, sessionId, "forbidden")).stopReason, "end_turn");
    assert.equal(agent.permissions.length, 2);
    const denied = agent.updates.find((n) => n.update.sessionUpdate === "tool_call_update")!
      .update as acp.ToolCallUpdate;
    assert.equal(denied.status, "failed");
    assert.equal(await Deno.readTextFile(`${dir}/gone/keep.txt`), "still here");
  });
});
