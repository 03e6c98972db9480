/**
 * Limits count per prompt (docs/result.md) — per `hermes run`, per `--resume -p`, per RPC `session.prompt`, per ACP
 * `session/prompt` — not per live session. Real subprocesses, the scripted model.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const job = (limits: string) =>
  `name: limited\nmodel: { provider: scripted, script: ./replies.yaml }\nlimits: ${limits}\n` +
  `tools:\n  shell: { allow: ["echo *"], timeout: 10s }\n`;

// Each prompt's answer takes one model call of 60 tokens; "tool" needs two calls.
const REPLIES = `- { match: first, content: one, usage: { prompt_tokens: 40, completion_tokens: 20 } }
- { match: second, content: two, usage: { prompt_tokens: 40, completion_tokens: 20 } }
- { match: tool, tool_calls: [{ name: shell, arguments: { command: "echo hi" } }] }
- { match: tool, content: never sent }
- { match: third, content: three, usage: { prompt_tokens: 40, completion_tokens: 20 } }
`;

async function dirFor(limits: string): Promise<string> {
  return await writeFiles(await tempDir("hermes-limits-"), {
    "job.yaml": job(limits),
    "replies.yaml": REPLIES,
  });
}

Deno.test({
  name:
    "limits per prompt (rpc): max_turns 1 and max_tokens 100 hold for each session.prompt, not the session",
  ignore: withoutSandbox,
}, async () => {
  const dir = await dirFor("{ max_turns: 1, max_tokens: 100 }");
  await using client = new RpcClient({ home: dir, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  const session_id = (created.result as { session_id: string }).session_id;
  const prompt = async (text: string) =>
    (await client.request("session.prompt", { session_id, text })).result as Record<string, unknown>;
  const first = await prompt("first");
  assert.equal(first.status, "success");
  assert.equal(first.turns, 1);
  const second = await prompt("second");
  assert.equal(second.status, "success", JSON.stringify(second));
  assert.equal(second.turns, 1);
  assert.equal(second.final, "two");
  // The limit still holds inside one prompt: a tool round needs a second model call.
  const tool = await prompt("tool");
  assert.equal(tool.status, "limit");
  assert.equal(tool.terminal_reason, "max_turns");
  assert.equal(tool.turns, 1);
  const third = await prompt("third");
  assert.equal(third.status, "success", JSON.stringify(third));
  assert.equal(third.final, "three");
  assert.equal((await client.finish()).code, 0);
});

Deno.test({
  name: "limits per prompt (rpc): each tick of a loop driven in the background has its own max_turns",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir("hermes-limits-"), {
    "job.yaml": job("{ max_turns: 1 }") + "loops: { min_interval: 1s }\n",
    "replies.yaml": "- { match: tick, content: ticked }\n- { match: tick, content: ticked }\n" +
      "- { match: tick, content: ticked }\n- { match: after, content: still answering }\n",
  });
  await using client = new RpcClient({ home: dir, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  const session_id = (created.result as { session_id: string }).session_id;
  const started = await client.request("session.command", { session_id, command: "/loop 1s tick --times 3" });
  assert.equal(started.error, undefined, JSON.stringify(started.error));
  for (let i = 0; i < 400 && !client.events(session_id).some((e) => e.type === "loop.end"); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const end = client.events(session_id).find((e) => e.type === "loop.end");
  assert.deepEqual(end && [end.status, end.ticks], ["done", 3], JSON.stringify(end));
  const after = (await client.request("session.prompt", { session_id, text: "after" })).result as Record<
    string,
    unknown
  >;
  assert.equal(after.status, "success", JSON.stringify(after));
  assert.equal(after.final, "still answering");
  assert.equal((await client.finish()).code, 0);
});

Deno.test({
  name: "limits per prompt (run --resume -p): each run of a session has its own max_turns",
  ignore: withoutSandbox,
}, async () => {
  const dir = await dirFor("{ max_turns: 1 }");
  const first = await hermes(["run", "job.yaml", "-p", "first", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(first.code, 0, first.stderr);
  const id = JSON.parse(first.stdout).session_id;
  const second = await hermes(["run", "--resume", id, "-p", "second", "--output", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(second.code, 0, second.stderr);
  assert.equal(JSON.parse(second.stdout).turns, 1);
  const tool = await hermes(["run", "--resume", id, "-p", "tool", "--output", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(tool.code, 3);
  assert.equal(JSON.parse(tool.stdout).terminal_reason, "max_turns");
});

Deno.test({
  name:
    "limits per prompt (acp): max_turns 1 holds for each session/prompt; the limit still stops a tool round",
  ignore: withoutSandbox,
}, async () => {
  const dir = await dirFor("{ max_turns: 1 }");
  const child = spawnHermes(["acp", "--home", dir], { cwd: dir, stdin: "piped" });
  const stderr = new Response(child.stderr).text();
  const client = acp.client({ name: "hermes-test" })
    .onNotification(acp.methods.client.session.update, () => {});
  const reasons: string[] = [];
  try {
    await client.connectWith(acp.ndJsonStream(child.stdin, child.stdout), async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
        _meta: { hermes: { job: "job.yaml" } },
      });
      for (const text of ["first", "second", "tool", "third"]) {
        const response = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text }],
        });
        reasons.push(response.stopReason);
      }
    });
  } finally {
    await child.stdin.close().catch(() => {});
    await child.status;
    await stderr;
  }
  assert.deepEqual(reasons, ["end_turn", "end_turn", "max_turn_requests", "end_turn"]);
});
