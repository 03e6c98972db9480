/** ACP `session/new` `mcpServers` (stdio and Streamable HTTP) through `hermes acp` and the real SDK client. */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { httpEverything, referenceServers } from "../../runtime/mcp/_testing.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const REPLIES =
  `- { match: echo, tool_calls: [{ name: mcp__my-files__echo, arguments: { message: via acp } }] }
- { match: echo, content: echoed }
- { match: env, tool_calls: [{ name: mcp__my-files__get-env, arguments: {} }] }
- { match: env, content: env shown }
- { match: remote, tool_calls: [{ name: mcp__remote__get-sum, arguments: { a: 20, b: 22 } }] }
- { match: remote, content: summed }
`;

Deno.test({
  name: "acp: session/new mcpServers (stdio with env values, HTTP) are offered as mcp__NAME__TOOL",
  ignore: withoutSandbox,
}, async () => {
  const { everything } = await referenceServers();
  const http = await httpEverything();
  const dir = await writeFiles(await tempDir("hermes-acp-mcp-"), {
    "job.yaml": "name: acpmcp\nmodel: { provider: scripted, script: ./replies.yaml }\n",
    "replies.yaml": REPLIES,
  });
  const child = spawnHermes(["acp", "--home", dir], { cwd: dir, stdin: "piped" });
  const stderr = new Response(child.stderr).text();
  const updates: acp.SessionNotification[] = [];
  const client = acp.client({ name: "hermes-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    });
  try {
    await client.connectWith(acp.ndJsonStream(child.stdin, child.stdout), async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      assert.deepEqual(init.agentCapabilities?.mcpCapabilities, { http: true, sse: false });
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
        cwd: dir,
        mcpServers: [
          { name: "My Files", command: everything, args: [], env: [{ name: "FROM_EDITOR", value: "e-1" }] },
          { type: "http", name: "remote", url: http.url, headers: [{ name: "X-Test", value: "1" }] },
        ],
        _meta: { hermes: { job: "job.yaml" } },
      });
      const echoed = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "echo please" }],
      });
      assert.equal(echoed.stopReason, "end_turn");
      const shown = JSON.stringify(updates);
      assert.match(shown, /mcp__my-files__echo/);
      assert.match(shown, /Echo: via acp/);
      await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "env" }],
      });
      assert.match(JSON.stringify(updates), /FROM_EDITOR.{0,10}e-1/);
      await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "remote" }],
      });
      assert.match(JSON.stringify(updates), /The sum of 20 and 22 is 42/);
    });
  } finally {
    await child.stdin.close().catch(() => {});
    const status = await child.status;
    const log = await stderr;
    await http.close();
    assert.equal(status.code, 0, log);
  }
});
