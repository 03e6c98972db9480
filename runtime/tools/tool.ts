/** The tool seam: built-in tools and plugin tools both implement `Tool`. */
import type { ToolSpec } from "../core/types.ts";

export interface ToolContext {
  session_id: string;
  /** Directory the job file lives in; relative paths in tool config and arguments resolve against it. */
  job_dir: string;
  /** Environment for subprocesses (the job's `env:` over a minimal base); never the whole parent env. */
  env: Record<string, string>;
  signal: AbortSignal;
}

export type ToolStatus = "ok" | "error" | "denied";

export interface ToolOutcome {
  status: ToolStatus;
  /** Text given back to the model as the tool result. */
  content: string;
}

export interface Tool {
  readonly spec: ToolSpec;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome>;
}

export function denied(message: string): ToolOutcome {
  return { status: "denied", content: `denied: ${message}` };
}
