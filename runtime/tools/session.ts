/**
 * The tools part of a session, for the session opener: the built-in tools the job enables, after the shell
 * tool's OS sandbox has been checked (a machine that cannot run it refuses before any model call, never a
 * silent downgrade); the environment tools run with; and the job's own approver (`approval:`), which takes
 * precedence over the front-end's.
 */
import type { ApprovalConfig, ToolsConfig } from "../config/job_schema.ts";
import { builtinTools } from "./builtin.ts";
import type { HostEnv } from "../core/host_env.ts";
import type { ProtectedPaths } from "../core/protected_paths.ts";
import type { ToolAsker } from "./gate.ts";
import type { ApiApproverOptions } from "./approval_api.ts";
import type { ToolSandbox, ToolSandboxOptions } from "./shell/sandbox.ts";
import type { Tool } from "./tool.ts";

export interface SessionTools {
  tools: Tool[];
  /** The shell tool's sandbox, when the job has a shell tool. */
  sandbox: ToolSandbox | null;
}

/** An approver of calls outside the allow-lists, and how denials name it ("the editor"). */
export interface NamedAsker {
  ask: ToolAsker;
  name: string;
}

/** The job's built-in tools, their sandbox checked first. */
export async function sessionTools(
  config: ToolsConfig | undefined,
  options: ToolSandboxOptions & {
    protect?: ProtectedPaths;
    /**
     * No tool will run: every result is served from a recording (`hermes replay --tools recorded`), so no
     * sandbox is checked or prepared. Should one run anyway, the shell tool asks the session's probe then.
     */
    served?: boolean;
  },
): Promise<SessionTools> {
  // The shell tool's sandbox module is loaded only for a job with a shell tool (checkToolSandbox is null
  // without one).
  const sandbox = options.served || !config?.shell
    ? null
    : await (await import("./shell/sandbox.ts")).checkToolSandbox(config, {
      ...options,
      ...(options.protect ? { read_only: options.protect.paths } : {}),
    });
  return {
    tools: await builtinTools(config, {
      job_dir: options.job_dir,
      ...(sandbox ? { sandbox } : {}),
      ...(options.probe ? { probe: options.probe } : {}),
      ...(options.protect ? { protect: options.protect } : {}),
    }),
    sandbox,
  };
}

const TOOL_ENV_NAMES = ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL"];

/** What tools run with: a few names of the process environment, then the job's `env:`. */
export function toolEnv(env: Record<string, string>, jobEnv: Record<string, string>): Record<string, string> {
  // Always a PATH: bash's built-in default includes ".", which would let a written script shadow a command.
  const base: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin" };
  for (const name of TOOL_ENV_NAMES) if (env[name] !== undefined) base[name] = env[name]!;
  return { ...base, ...jobEnv };
}

/** The job's `approval:` approver if it has one (loaded only then), else the front-end's (if any). */
export async function sessionAsker(
  approval: ApprovalConfig | undefined,
  options: {
    job: string;
    job_dir: string;
    host_env: HostEnv;
    /** For `approval: {api: true}`: where the call is parked and how the wait is announced. */
    api: Omit<ApiApproverOptions, "job" | "timeoutMs">;
  },
  frontEnd: NamedAsker | undefined,
): Promise<NamedAsker | undefined> {
  if (!approval) return frontEnd;
  if (approval.api) {
    const { apiApprover, DEFAULT_API_APPROVAL_TIMEOUT } = await import("./approval_api.ts");
    const { parseDuration } = await import("../core/duration.ts");
    return {
      ask: apiApprover({
        ...options.api,
        job: options.job,
        timeoutMs: parseDuration(approval.timeout ?? DEFAULT_API_APPROVAL_TIMEOUT),
      }),
      name: "the API's approver (approval: {api: true})",
    };
  }
  const { jobApprover } = await import("./approval.ts");
  return {
    ask: jobApprover(approval, options),
    name: approval.command ? "the approval command" : "the approval url",
  };
}
