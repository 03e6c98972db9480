import assert from "node:assert/strict";
import { childJob, rootScope } from "./delegate.ts";
import type { ResolvedJob } from "../config/job.ts";

const parent: ResolvedJob = {
  spec: {
    name: "lead",
    prompt: "go",
    system: "lead system",
    tools: { read_file: { paths: ["."] }, shell: { allow: ["git *"] } },
    mcp_servers: { docs: { url: "https://example.test/mcp" } },
    limits: { max_turns: 5, timeout: "1m", max_cost_usd: 1 },
    agents: {
      worker: { description: "works", tools: ["read_file"], limits: { max_turns: 50, timeout: "10s" } },
    },
  },
  path: "/tmp/job.yaml",
  dir: "/tmp",
  inputs: {},
  env: {},
};

Deno.test("childJob: the agent's tools with the parent's rules, no MCP servers, limits no looser than the parent's", () => {
  const child = childJob(parent, "worker", parent.spec.agents!.worker!);
  assert.equal(child.spec.name, "lead.worker");
  assert.deepEqual(child.spec.tools, { read_file: { paths: ["."] } });
  assert.equal(child.spec.mcp_servers, undefined);
  assert.equal(child.spec.prompt, undefined);
  assert.equal(child.spec.system, undefined, "the parent's system prompt is not the agent's");
  assert.deepEqual(child.spec.limits, { max_turns: 5, timeout: "10s", max_cost_usd: 1 });
  assert.deepEqual(child.spec.workspace, { shared: true });
});

Deno.test("childJob: an agent without tools: gets all the parent's tools and its MCP servers", () => {
  const child = childJob(parent, "all", { description: "everything", system: "worker system" });
  assert.deepEqual(child.spec.tools, parent.spec.tools);
  assert.deepEqual(child.spec.mcp_servers, parent.spec.mcp_servers);
  assert.equal(child.spec.system, "worker system");
  assert.deepEqual(child.spec.limits, { max_turns: 5, timeout: "1m", max_cost_usd: 1 });
});

Deno.test("rootScope: defaults 4 at once and depth 2; the job's limits override them", () => {
  assert.deepEqual(rootScope({ name: "a" }), { depth: 0, maxDepth: 2, maxConcurrent: 4 });
  assert.deepEqual(
    rootScope({ name: "a", limits: { max_agent_depth: 1, max_concurrent_agents: 9 } }),
    { depth: 0, maxDepth: 1, maxConcurrent: 9 },
  );
});
