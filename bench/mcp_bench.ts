/**
 * MCP benchmark: the round trip of an MCP tool call (`mcp__ev__echo` of the reference
 * server-everything, in its OS sandbox, through the Tool seam the agent uses) against a built-in tool call
 * (`read_file` of a small file), interleaved in blocks; and server start (spawn → initialize → tools/list)
 * in the sandbox against `sandbox: off`. Figures are the median (min–max) of per-block medians.
 * Run: `deno run -A bench/mcp_bench.ts`.
 */
import { EventBus } from "../runtime/core/events.ts";
import { systemClock } from "../runtime/core/clock.ts";
import { silentLogger } from "../runtime/core/log.ts";
import type { McpServerEntry } from "../runtime/config/job_schema.ts";
import { startMcpServers } from "../runtime/mcp/mod.ts";
import { referenceServers } from "../runtime/mcp/_testing.ts";
import { builtinTools } from "../runtime/tools/builtin.ts";
import type { Tool, ToolContext } from "../runtime/tools/tool.ts";
import { interleave, median, ratio, report, spread } from "./_stats.ts";
import { NO_SCOPE } from "../runtime/tools/tool.ts";

const { everything } = await referenceServers();
const dir = await Deno.makeTempDir({ prefix: "hermes-mcp-bench-" });
await Deno.writeTextFile(`${dir}/small.txt`, "hello\n");
const env: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dir };
const options = {
  job_dir: dir,
  env,
  events: new EventBus(systemClock),
  session_id: "bench",
  log: silentLogger,
};
const entry = (sandbox: McpServerEntry["sandbox"]): Record<string, McpServerEntry> => ({
  ev: { command: everything, tools: { allow: ["echo"] }, ...(sandbox ? { sandbox } : {}) },
});

const started = await interleave({
  sandboxed: async () => {
    const t0 = performance.now();
    const servers = await startMcpServers(entry(undefined), options);
    const ms = performance.now() - t0;
    await servers.stop();
    return ms;
  },
  unsandboxed: async () => {
    const t0 = performance.now();
    const servers = await startMcpServers(entry("off"), options);
    const ms = performance.now() - t0;
    await servers.stop();
    return ms;
  },
}, { rounds: 10 });
report("MCP server start, sandboxed (spawn → tools listed)", spread(started.sandboxed));
report("MCP server start, sandbox: off", spread(started.unsandboxed));
report("sandboxed start ÷ unsandboxed", ratio(started.sandboxed, started.unsandboxed));

const servers = await startMcpServers(entry(undefined), options);
try {
  const echo = servers.tools[0]!;
  const readFile = (await builtinTools({ read_file: {} }, { job_dir: dir }))[0]!;
  const context: ToolContext = {
    session_id: "bench",
    job_dir: dir,
    env,
    host_env: env,
    signal: new AbortController().signal,
  };
  const block = (tool: Tool, args: Record<string, unknown>) => async () => {
    const samples: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      const outcome = await tool.run(args, context, NO_SCOPE);
      samples.push(performance.now() - t0);
      if (outcome.status !== "ok") throw new Error(outcome.content);
    }
    return median(samples);
  };
  const calls = await interleave({
    mcp: block(echo, { message: "hi" }),
    builtin: block(readFile, { path: "small.txt" }),
  }, { rounds: 20 });
  report("MCP tool call round trip (echo, sandboxed stdio)", spread(calls.mcp));
  report("built-in tool call (read_file, small file)", spread(calls.builtin));
  report("MCP call ÷ built-in call", ratio(calls.mcp, calls.builtin));
} finally {
  await servers.stop();
  await Deno.remove(dir, { recursive: true });
}
