/**
 * Usage and cost on every surface: RPC `session.prompt`'s result and `session.get`'s session, ACP's prompt
 * response (`_meta.hermes.result`), `sessions list --json` — the same counts the provider reported and the
 * same cost by `model.pricing`.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient } from "../_testing/rpc_client.ts";

const JOB = `name: counted
model: { provider: scripted, script: ./replies.yaml, pricing: { input: 2, output: 8, cached_input: 0.5, cache_write: 2.5 } }
`;
const REPLIES = "- content: counted\n" +
  "  usage: { prompt_tokens: 1000, completion_tokens: 300, cached_tokens: 600, cache_write_tokens: 200, reasoning_tokens: 250 }\n";
const usage = {
  prompt_tokens: 1000,
  completion_tokens: 300,
  cached_tokens: 600,
  cache_write_tokens: 200,
  reasoning_tokens: 250,
};
// 200 uncached at $2, 600 cached at $0.50, 200 written at $2.50, 300 out at $8 per million.
const cost = (200 * 2 + 600 * 0.5 + 200 * 2.5 + 300 * 8) / 1e6;

Deno.test("usage everywhere: RPC session.prompt and session.get, sessions list --json", async () => {
  const dir = await writeFiles(await tempDir("hermes-usage-rpc-"), {
    "job.yaml": JOB,
    "replies.yaml": REPLIES,
  });
  const client = new RpcClient({ home: dir, cwd: dir });
  const created = await client.request("session.create", { job: "job.yaml" });
  const id = (created.result as { session_id: string }).session_id;
  const prompted = (await client.request("session.prompt", { session_id: id, text: "count" }))
    .result as Record<
      string,
      unknown
    >;
  assert.deepEqual(prompted.usage, usage);
  assert.equal(prompted.cost_usd, cost);
  const got = (await client.request("session.get", { session_id: id })).result as {
    session: Record<string, unknown>;
  };
  assert.deepEqual(
    [
      got.session.cached_tokens,
      got.session.cache_write_tokens,
      got.session.reasoning_tokens,
      got.session.cost_usd,
    ],
    [600, 200, 250, cost],
  );
  const { code } = await client.finish();
  assert.equal(code, 0);
  const list = await hermes(["sessions", "list", "--json"], { home: dir });
  const [row] = JSON.parse(list.stdout);
  assert.deepEqual([row.prompt_tokens, row.reasoning_tokens, row.cost_usd], [1000, 250, cost]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("usage everywhere: ACP's prompt response carries the result's usage and cost", async () => {
  const dir = await writeFiles(await tempDir("hermes-usage-acp-"), {
    "job.yaml": JOB,
    "replies.yaml": REPLIES,
  });
  const child = spawnHermes(["acp", "--home", dir], { cwd: dir, stdin: "piped" });
  const stderr = new Response(child.stderr).text();
  const client = acp.client({ name: "hermes-test" }).onNotification(
    acp.methods.client.session.update,
    () => {},
  );
  const response = await client.connectWith(acp.ndJsonStream(child.stdin, child.stdout), async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
      cwd: dir,
      mcpServers: [],
      _meta: { hermes: { job: "job.yaml" } },
    });
    return await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "count" }],
    });
  }).finally(() => child.stdin.close().catch(() => {}));
  const status = await child.status;
  assert.equal(status.code, 0, await stderr);
  const result = (response._meta?.hermes as { result: Record<string, unknown> }).result;
  assert.deepEqual(result.usage, usage);
  assert.equal(result.cost_usd, cost);
  await Deno.remove(dir, { recursive: true });
});
