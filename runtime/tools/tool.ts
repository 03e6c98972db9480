/** The tool seam: built-in tools and plugin tools both implement `Tool`. */
import type { ToolSpec } from "../core/types.ts";

export interface ToolContext {
  session_id: string;
  /** Directory the job file lives in; relative paths in tool config and arguments resolve against it. */
  job_dir: string;
  /** Environment for subprocesses (the job's `env:` over a minimal base); never the whole parent env. */
  env: Record<string, string>;
  signal: AbortSignal;
  /** The model's id of this call (progress events name it). */
  tool_call_id?: string;
}

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
