/**
 * ACP `session/new` `mcpServers` as `mcp_servers` entries (docs/acp.md): stdio entries keep their
 * command, args and env values, HTTP entries their url and headers; both then run exactly like a job's
 * servers (OS sandbox, tool filtering, hooks, events). SSE, deprecated in MCP, is not offered
 * (`mcpCapabilities.sse: false`) and an SSE entry is skipped with a warning. The editor's names become
 * valid server names (`My Files` → `my-files`), as they appear in `mcp__NAME__TOOL`.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { McpServerEntry } from "../config/job_schema.ts";
import type { Logger } from "../core/log.ts";

export function mcpServersOf(
  servers: readonly acp.McpServer[],
  log: Logger,
): Record<string, McpServerEntry> {
  const entries: Record<string, McpServerEntry> = {};
  for (const server of servers) {
    const name = server.name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || "server";
    if ("type" in server && server.type === "sse") {
      log.warn(
        `acp: skipping MCP server "${server.name}": SSE servers are not supported (use Streamable HTTP)`,
      );
      continue;
    }
    entries[name] = "type" in server && server.type === "http"
      ? { url: server.url, headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) }
      : {
        command: (server as acp.McpServerStdio).command,
        args: (server as acp.McpServerStdio).args,
        env: Object.fromEntries((server as acp.McpServerStdio).env.map((v) => [v.name, v.value])),
      };
  }
  return entries;
}
