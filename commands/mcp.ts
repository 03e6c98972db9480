/**
 * `hermes mcp list [JOB.yaml] [--json]` — the MCP servers of a job (merged over config.yaml) or, without a
 * job, of config.yaml: each is started the way a run starts it (same sandbox, env, timeouts), its tools
 * are listed as offered or filtered (and why), and it is stopped. Exit 0, or 2 when a required server does
 * not start.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { EventBus } from "../runtime/core/events.ts";
import { loadJob, loadUserConfig } from "../runtime/config/job_file.ts";
import type { McpServerEntry } from "../runtime/config/job_schema.ts";
import { type McpServerStatus, startMcpServers } from "../runtime/mcp/mod.ts";
import { visibleText } from "../runtime/core/visible.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("mcp", cli.args);
  const [sub, path, ...extra] = positionals;
  if (sub !== "list" || extra.length > 0) {
    throw new ValidationError("hermes mcp: expected `mcp list [JOB.yaml] [--json]`");
  }
  const loaded = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  const config = loaded ? { config: loaded } : {};
  let servers: Record<string, McpServerEntry>;
  let dir: string;
  if (path !== undefined) {
    // Resolved like a run (headers' {{ env.X }} substituted); a job whose inputs are missing is still listed.
    const job = tryLoad(() => loadJob(path, { ...config, env: cli.env })) ??
      loadJob(path, { ...config, env: cli.env, validateOnly: true });
    servers = job.spec.mcp_servers ?? {};
    dir = job.dir;
  } else {
    servers = loaded?.mcp_servers ?? {};
    dir = Deno.cwd();
  }
  const started = await startMcpServers(servers, {
    job_dir: dir,
    env: cli.env,
    events: new EventBus(cli.clock),
    session_id: "mcp-list",
    log: cli.log.child("mcp"),
    reportOnly: true,
  });
  await started.stop();
  await print(cli, started.status, values.json === true);
  return started.status.some((s) => s.required && !s.started) ? 2 : 0;
}

function tryLoad<T>(load: () => T): T | undefined {
  try {
    return load();
  } catch (error) {
    if (error instanceof ValidationError && /input/i.test(error.message)) return undefined;
    throw error;
  }
}

async function print(cli: Cli, servers: McpServerStatus[], json: boolean): Promise<void> {
  if (json) {
    await cli.out(JSON.stringify(servers, null, 2) + "\n");
    return;
  }
  if (servers.length === 0) await cli.out("no MCP servers\n");
  for (const s of servers) {
    const lines = [
      s.started
        ? `✓ ${s.name} (${s.transport}${s.required ? ", required" : ""}) started in ${s.start_ms} ms`
        : `✗ ${s.name} (${s.transport}${s.required ? ", required" : ""})\n  error: ${s.error}`,
    ];
    for (const t of s.tools) {
      lines.push(`  ${t.offered ? "tool" : "filtered"} ${t.exposed}${t.reason ? ` — ${t.reason}` : ""}`);
    }
    if (s.started && s.tools.length === 0) lines.push("  no tools");
    await cli.out(visibleText(lines.join("\n") + "\n"));
  }
}
