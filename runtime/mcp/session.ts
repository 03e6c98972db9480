/**
 * The MCP part of a session, for the session opener: none for a job without servers, else the started
 * servers (a required one that fails is exit 2, before the first model call). The SDK is imported only then.
 */
import type { McpServerEntry } from "../config/job_schema.ts";
import type { McpServers, StartMcpOptions } from "./mod.ts";

export async function startSessionMcp(
  entries: Readonly<Record<string, McpServerEntry>> | undefined,
  options: StartMcpOptions,
): Promise<McpServers | undefined> {
  if (!entries || Object.keys(entries).length === 0) return undefined;
  return await (await import("./mod.ts")).startMcpServers(entries, options);
}
