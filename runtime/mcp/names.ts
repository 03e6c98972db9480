/**
 * How MCP tools are named for the model: `mcp__SERVER__TOOL`, kept to what chat APIs accept
 * (`[A-Za-z0-9_-]{1,64}`). Which ones it may call is the server's `tools: {allow, deny}`
 * (runtime/tools/name_rules.ts), applied by the session's tool gate.
 */
export { filteredOut, type ToolFilter } from "../tools/name_rules.ts";

export function exposedName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64);
}
