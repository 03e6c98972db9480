/** Issue 21: `hermes acp` holds a job named in session/new to the trust policy (`--policy`), like run and rpc. */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { MAIN, tempDir, writeFiles } from "./_cli.ts";

Deno.test("acp: session/new with a job beyond the policy is refused naming key and rule; one within it opens", async () => {
  const dir = await writeFiles(await tempDir("hermes-acp-policy-"), {
    "beyond.yaml":
      "name: beyond\nmodel: { provider: scripted, script: ./r.yaml }\nlimits: { max_turns: 50 }\n",
    "within.yaml":
      "name: within\nmodel: { provider: scripted, script: ./r.yaml }\nlimits: { max_turns: 5 }\n",
    "r.yaml": "- content: hi\n",
    "policy.yaml": "limits: { max_turns: 10 }\n",
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--policy", `${dir}/policy.yaml`, "acp", "--home", dir],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const client = acp.client({ name: "hermes-test" });
  try {
    await client.connectWith(acp.ndJsonStream(child.stdin, child.stdout), async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const open = (job: string) =>
        ctx.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [], _meta: { hermes: { job } } });
      const refused = await open("beyond.yaml").then(() => null, (error) => error);
      assert.ok(refused instanceof acp.RequestError, String(refused));
      assert.match(
        refused.message,
        /beyond\.yaml:3:\d+: limits\.max_turns: refused by policy .*policy\.yaml/,
      );
      const { sessionId } = await open("within.yaml");
      assert.ok(sessionId);
    });
  } finally {
    await child.stdin.close().catch(() => {});
    await child.status;
    await stderr;
  }
});
