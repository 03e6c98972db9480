/**
 * Test support for tools: a call decided as the gate decides it (gate.ts `needsOf`) and run within the
 * scope that decision grants, without an approver, hooks or events. A call the rules refuse is denied with
 * the rules' reason, as the gate would deny it.
 */
import { needsOf } from "./gate.ts";
import { denied, type Tool, type ToolContext, type ToolOutcome } from "./tool.ts";

export function callTool(
  tool: Tool,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolOutcome> {
  const { verdict, scope } = needsOf(tool, args);
  if (!verdict.allowed) return Promise.resolve(denied(verdict.reason));
  return tool.run(args, context, scope);
}
