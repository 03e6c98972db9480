/**
 * `hermes acp` holds a job named in session/new, and a stored one in session/load, to the trust
 * policy (`--policy`), like run and rpc.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";

type AcpContext = Parameters<Parameters<ReturnType<typeof acp.client>["connectWith"]>[1]>[0];

/** `hermes --policy POLICY acp` in `dir`, initialized, for `fn`; the server is stopped after. */
async function withAcp<T>(dir: string, policy: string, fn: (ctx: AcpContext) => Promise<T>): Promise<T> {
  const child = spawnHermes(["--policy", `${dir}/${policy}`, "acp", "--home", dir], {
    cwd: dir,
    stdin: "piped",
  });
  const stderr = new Response(child.stderr).text();
  const client = acp.client({ name: "hermes-test" });
  try {
    return await client.connectWith(acp.ndJsonStream(child.stdin, child.stdout), async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      return await fn(ctx);
    });
  } finally {
    await child.stdin.close().catch(() => {});
    await child.status;
    await stderr;
  }
}

Deno.test("acp: session/new with a job beyond the policy is refused naming key and rule; one within it opens", async () => {
  const dir = await writeFiles(await tempDir("hermes-acp-policy-"), {
    "beyond.yaml":
      "name: beyond\nmodel: { provider: scripted, script: ./r.yaml }\nlimits: { max_turns: 50 }\n",
    "within.yaml":
      "name: within\nmodel: { provider: scripted, script: ./r.yaml }\nlimits: { max_turns: 5 }\n",
    "r.yaml": "- content: hi\n",
    "policy.yaml": "limits: { max_turns: 10 }\n",
  });
  await withAcp(dir, "policy.yaml", async (ctx) => {
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
});

Deno.test("acp: session/load of a stored job beyond today's policy is refused naming the rule; within it, it loads", async () => {
  const dir = await writeFiles(await tempDir("hermes-acp-policy-"), {
    "job.yaml":
      "name: stored\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\nlimits: { max_turns: 50 }\n",
    "r.yaml": "- content: hi\n",
    "tight.yaml": "limits: { max_turns: 10 }\n",
    "loose.yaml": "limits: { max_turns: 100 }\n",
  });
  const first = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(first.code, 0, first.stderr);
  const id: string = JSON.parse(first.stdout).session_id;
  const load = (policy: string) =>
    withAcp(
      dir,
      policy,
      (ctx) =>
        ctx.request(acp.methods.agent.session.load, { sessionId: id, cwd: dir, mcpServers: [] })
          .then(() => null, (error) => error),
    );
  const refused = await load("tight.yaml");
  assert.ok(refused instanceof acp.RequestError, String(refused));
  assert.match(
    refused.message,
    new RegExp(`session ${id}: limits\\.max_turns: refused by policy .*tight\\.yaml`),
  );
  assert.equal(await load("loose.yaml"), null);
});
