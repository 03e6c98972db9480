/**
 * The tool seam: built-in, plugin and MCP tools all implement `Tool`; every call of one goes through the
 * session's gate (gate.ts). A tool declares what a call needs (`needs`: the job's rules applied to its
 * arguments, evaluated once); the gate decides whether it runs and hands it the scope to run in, and the
 * tool acts within that scope object alone — it never learns how the call was let through.
 */
import type { ToolSpec } from "../core/types.ts";
import type { HostEnv } from "../core/host_env.ts";
import type { HostRule } from "../sandbox/net_hosts.ts";
import type { PathScope } from "./paths.ts";
import type { ShellSandbox } from "./shell/sandbox.ts";

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
   * A resumable tool's call that a killed run left open, run again on resume (Tool.resumable): the tool
   * takes up what the first attempt started. A fresh call is never one, even when the model reuses its id.
   */
  resumed?: boolean;
}

/**
 * What one call may reach, handed to the tool by the gate: the grant of the job's rules, or for a call
 * outside an allow-list that an approver let through, the narrower-or-wider grant of that call alone.
 * Each built-in tool reads its own part; a tool given no part of its own refuses to run.
 */
export interface ToolScope {
  /**
   * read_file, write_file, list_dir: the roots the call may reach. `pinned`: the one real path the call
   * must still lead to when it runs (the object an approver was shown, its real path the only root).
   */
  readonly files?: { readonly roots: PathScope; readonly pinned?: string };
  /** http_fetch: the hosts the call and every redirect hop may reach; `any`: every name (no internal address). */
  readonly hosts?: { readonly rules: readonly HostRule[]; readonly any: boolean };
  /**
   * shell: the command line exactly as the policy judged it, and the OS sandbox profile it runs in (its
   * bubblewrap from the session's one probe), or "off".
   */
  readonly shell?: { readonly command: string; readonly sandbox: ShellSandbox | "off" };
}

/** The scope of a tool that reaches nothing the gate grants (plugin, MCP and agent tools). */
export const NO_SCOPE: ToolScope = Object.freeze({});

/**
 * What a call needs, declared by the tool with the job's rules applied to its arguments once: the verdict,
 * and the scope the call runs in if it runs — the rules' grant when the verdict allows it, else the grant an
 * approval of this call alone would give (the gate hands it over only after an approver said yes).
 */
export interface CallNeeds {
  verdict: RuleVerdict;
  scope: ToolScope;
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
  /** What this call needs under the job's rules (default: allowed, with no scope). */
  needs?(args: Record<string, unknown>): CallNeeds;
  /** Runs the call within `scope`, the one the gate handed over; nothing outside it. */
  run(args: Record<string, unknown>, context: ToolContext, scope: ToolScope): Promise<ToolOutcome>;
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
  scope: ToolScope = NO_SCOPE,
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
    tool.run(args, context, scope).then(resolve, reject).finally(done);
  });
}
