/**
 * Asking before a tool call outside the job's allow-lists. A built-in tool denies such a call; the wrapper
 * here then asks (ACP: `session/request_permission` to the editor) and, when the user allows it once, runs
 * that one call with a copy of the tool whose allow-lists are lifted (`tools.shell.allow`, the `paths` roots,
 * `http_fetch.hosts`). What is not an allow-list still applies and is never asked about: `tools.shell.deny`
 * (an explicit prohibition), file redirections, PATH assignments, size limits. Nothing is remembered: the
 * next such call asks again.
 */
import type { ResolvedJob } from "../config/job.ts";
import type { ToolsConfig } from "../config/job_schema.ts";
import { builtinTools } from "../tools/builtin.ts";
import type { ToolSandbox } from "../tools/shell/sandbox.ts";
import { checkShellCommand } from "../tools/shell/policy.ts";
import type { Tool, ToolOutcome } from "../tools/tool.ts";

export interface PermissionRequest {
  session_id: string;
  tool: string;
  args: Record<string, unknown>;
  /** Why the tool refused the call (the `denied: …` text). */
  reason: string;
  /** The turn's signal: aborted when the turn is cancelled. */
  signal: AbortSignal;
}

/** Resolves true to run the call once, false to keep the denial. */
export type PermissionAsker = (request: PermissionRequest) => Promise<boolean>;

export interface AskingToolsOptions {
  job: ResolvedJob;
  ask: PermissionAsker;
  /** The session's checked shell sandbox: an approved call is lifted past the allow-lists, never past it. */
  sandbox?: ToolSandbox | null;
}

/** Wraps `tools` (built from `job.spec.tools`) so that a denied call is put to `ask`. */
export function askingTools(tools: readonly Tool[], options: AskingToolsOptions): Tool[] {
  const { job, ask } = options;
  let lifted: Map<string, Tool> | undefined;
  const liftedTool = (name: string) => {
    lifted ??= new Map(
      builtinTools(liftAllowLists(job.spec.tools), {
        job_dir: job.dir,
        ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      }).map((
        tool,
      ) => [tool.spec.name, tool]),
    );
    return lifted.get(name);
  };
  return tools.map((tool) => ({
    spec: tool.spec,
    async run(args, context): Promise<ToolOutcome> {
      const outcome = await tool.run(args, context);
      if (outcome.status !== "denied") return outcome;
      const bypass = liftedTool(tool.spec.name);
      if (!bypass || !liftable(job.spec.tools, tool.spec.name, args)) return outcome;
      const allowed = await ask({
        session_id: context.session_id,
        tool: tool.spec.name,
        args,
        reason: outcome.content,
        signal: context.signal,
      }).catch(() => false);
      if (!allowed) return { status: "denied", content: `${outcome.content} (the user rejected the call)` };
      return await bypass.run(args, context);
    },
  }));
}

/** Whether lifting the allow-lists could let this call run (a shell command must pass `deny` and the rest). */
function liftable(config: ToolsConfig | undefined, tool: string, args: Record<string, unknown>): boolean {
  if (tool !== "shell") return true;
  const command = args.command;
  return typeof command === "string" &&
    checkShellCommand(command, { ...(config?.shell?.deny ? { deny: config.shell.deny } : {}) }) === null;
}

/** The job's tool config with every allow-list opened; tools the job does not enable stay disabled. */
export function liftAllowLists(config: ToolsConfig | undefined): ToolsConfig {
  const lifted: ToolsConfig = {};
  if (config?.shell) {
    const { allow: _allow, ...rest } = config.shell;
    lifted.shell = rest;
  }
  if (config?.read_file) lifted.read_file = { ...config.read_file, paths: ["/"] };
  if (config?.write_file) lifted.write_file = { ...config.write_file, paths: ["/"] };
  if (config?.list_dir) lifted.list_dir = { ...config.list_dir, paths: ["/"] };
  if (config?.http_fetch) lifted.http_fetch = { ...config.http_fetch, hosts: ["*"] };
  return lifted;
}
