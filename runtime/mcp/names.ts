/**
 * How MCP tools are named for the model and which ones it is offered (docs/mcp.md): `mcp__SERVER__TOOL`,
 * kept to what chat APIs accept (`[A-Za-z0-9_-]{1,64}`), and `tools.allow` / `tools.deny` glob patterns
 * (`*` any run of characters, `?` one) on the server's own tool name.
 */
export interface ToolFilter {
  allow?: readonly string[] | undefined;
  deny?: readonly string[] | undefined;
}

export function exposedName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64);
}

/** Why a tool is not offered (`denied by "write_*"`, `not in tools.allow`), or null when it is. */
export function filteredOut(tool: string, filter: ToolFilter | undefined): string | null {
  const deny = filter?.deny?.find((pattern) => glob(pattern).test(tool));
  if (deny !== undefined) return `denied by tools.deny "${deny}"`;
  if (filter?.allow && !filter.allow.some((pattern) => glob(pattern).test(tool))) return "not in tools.allow";
  return null;
}

function glob(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}
