/**
 * The tool seam: built-in, plugin and MCP tools all implement `Tool`; every call of one goes through the
 * session's gate (gate.ts), which applies the job's rules (`permitted`, `check`) before the tool runs.
 */
import type { ToolSpec } from "../core/types.ts";
import type { HostEnv } from "../core/host_env.ts";

export interface ToolContext {
  session_id: string;
  /** Directory the job file lives in; relative paths in tool config and arguments resolve against it. */
  job_dir: string;
  /** Environment for subprocesses (the job's `env:` over a minimal base); never the whole parent env. */
  env: Record<string, string>;
  /**
   * Hermes's own environment (runtime/core/host_env.ts): what the programs a tool starts on the host (a
   * network bridge's deno, the shell that runs in the sandbox) are found with — never `env`, the job's.
   */
  host_env: HostEnv;
  signal: AbortSignal;
  /** The model's id of this call (progress events name it). */
  tool_call_id?: string;
  /**
   * The approver allowed this call although it is outside the job's allow-lists: the tool lifts its
   * allow-lists for this one call. Deny rules and the checks on the object actually used still hold.
   */
  approved?: boolean;
  /** With `approved`: the subject the approver was shown (RuleVerdict); the tool acts on nothing else. */
  subject?: string;
}

/**
 * What the job's rules say about a call: allowed, or not with the reason. `rule` names what the job could
 * add to allow it (the call is outside an allow-list, so an approver may be asked); null when a rule
 * forbids it outright (a deny pattern, a `.git` write, an invalid URL), which nobody is asked about.
 */
export type RuleVerdict = { allowed: true } | {
  allowed: false;
  reason: string;
  rule: string | null;
  /**
   * What the call acts on as it will be used, when that differs from its arguments as written: a file's
   * real path (symlinks resolved). The approver is shown it, and an approval covers it alone.
   */
  subject?: string;
};

export const ALLOWED: RuleVerdict = { allowed: true };

export type ToolStatus = "ok" | "error" | "denied";

export interface ToolOutcome {
  status: ToolStatus;
  /** Text given back to the model as the tool result. */
  content: string;
}

export interface Tool {
  readonly spec: ToolSpec;
  /** The MCP server this tool comes from; `tool.*` events carry it. */
  readonly server?: string;
  /**
   * The job's rule on the tool as a whole (an MCP server's or a plugin entry's `tools: {allow, deny}`);
   * absent: allowed. A tool not permitted is not offered to the model.
   */
  readonly permitted?: RuleVerdict;
  /**
   * Calls of this tool in one model step may run at the same time (their results are still stored in the
   * order the model made the calls); other tools' calls run one after another.
   */
  readonly concurrent?: boolean;
  /**
   * A call of this tool that a killed run left without a result is run again, with the same call id, when
   * the session resumes, instead of being reported as interrupted: the tool itself finishes the work that
   * call started exactly once (delegate: it takes up the task's session, or its stored answer).
   */
  readonly resumable?: boolean;
  /** The job's rules on this call's arguments, checked before it runs (default: allowed). */
  check?(args: Record<string, unknown>): RuleVerdict;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome>;
}

export function denied(message: string): ToolOutcome {
  return { status: "denied", content: `denied: ${message}` };
}

/** How long a tool may take to return its own outcome once its signal aborted, before it is abandoned. */
export const ABANDON_AFTER_MS = 1000;

/**
 * Runs one tool call bounded by its signal (limits.timeout, SIGINT, SIGTERM). A tool that honours the
 * signal returns its own outcome (the shell tool: "cancelled (killed)" with the output so far); one that
 * does not return within ABANDON_AFTER_MS of the abort is abandoned and the abort reason is thrown, so no
 * tool — a plugin's, a future one — can hold a run past its limits.
 */
export function runTool(
  tool: Tool,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolOutcome> {
  const { signal } = context;
  return new Promise<ToolOutcome>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      timer = setTimeout(() => reject(signal.reason), ABANDON_AFTER_MS);
    };
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    tool.run(args, context).then(resolve, reject).finally(done);
  });
}
