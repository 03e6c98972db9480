/**
 * Tool-name rules: `tools: {allow, deny}` of an MCP server or a plugin entry, glob patterns (`*` any run of
 * characters, `?` one) on the tool's own name. `deny` wins; with `allow`, a name must match one of it.
 */
import type { RuleVerdict } from "./tool.ts";

export interface ToolFilter {
  allow?: readonly string[] | undefined;
  deny?: readonly string[] | undefined;
}

/** Why a tool is not offered (`denied by "write_*"`, `not in tools.allow`), or null when it is. */
export function filteredOut(tool: string, filter: ToolFilter | undefined): string | null {
  const deny = filter?.deny?.find((pattern) => glob(pattern).test(tool));
  if (deny !== undefined) return `denied by tools.deny "${deny}"`;
  if (filter?.allow && !filter.allow.some((pattern) => glob(pattern).test(tool))) return "not in tools.allow";
  return null;
}

/**
 * The verdict of `filter` on `tool`, exposed to the model as `exposed`; `where` is the key path of the
 * filter in the job (`mcp_servers.fs.tools`, `plugins[0].tools`), named in the reason and the rule to add.
 */
export function nameVerdict(
  tool: string,
  filter: ToolFilter | undefined,
  names: { exposed: string; where: string },
): RuleVerdict {
  const deny = filter?.deny?.find((pattern) => glob(pattern).test(tool));
  if (deny !== undefined) {
    return {
      allowed: false,
      reason: `${names.exposed} is denied by ${names.where}.deny "${deny}"`,
      rule: null,
    };
  }
  if (filter?.allow && !filter.allow.some((pattern) => glob(pattern).test(tool))) {
    return {
      allowed: false,
      reason: `${names.exposed} is not in ${names.where}.allow`,
      rule: `${names.where}.allow: ["${tool}"]`,
    };
  }
  return { allowed: true };
}

function glob(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}
