/**
 * The built-in tools a job enables under `tools:` (docs/job-file.md). A tool is offered only when its key is
 * present; `{}` enables it with defaults. Relative paths in the config resolve against the job directory.
 */
import type { ProtectedPaths } from "../core/protected_paths.ts";
import { resolve } from "../core/path.ts";
import type { ToolsConfig } from "../config/job_schema.ts";
import { parseDuration, parseSize } from "../core/duration.ts";
import type { Tool } from "./tool.ts";
import { listDirTool, readFileTool, writeFileTool } from "./files.ts";
import { pathScope } from "./paths.ts";
import type { ToolSandbox } from "./shell/sandbox.ts";
import type { SandboxProbe } from "../sandbox/probe.ts";

export interface BuiltinToolsOptions {
  /** Directory of the job file. */
  job_dir: string;
  /**
   * What `checkToolSandbox` returned for this job (the session runs it before any model call). Without
   * it the shell tool asks `probe` for bubblewrap on its first call and hides only the default secrets.
   */
  sandbox?: ToolSandbox | null;
  /** The session's one sandbox probe (runtime/sandbox/probe.ts probeOnce); tools never probe on their own. */
  probe?: () => Promise<SandboxProbe>;
  /** Used by http_fetch; default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** What write_file may not write whatever its paths grant (a protected job: runtime/core/protected_paths.ts). */
  protect?: ProtectedPaths;
}

export const DEFAULTS = {
  shellTimeout: "60s",
  shellMaxOutput: 64 * 1024,
  readMaxBytes: 256 * 1024,
  writeMaxBytes: 1024 * 1024,
  listMaxEntries: 1000,
  fetchTimeout: "30s",
  fetchMaxOutput: 256 * 1024,
} as const;

/**
 * The tools `config` enables. The shell tool (its parser, policy and OS sandbox: ~20 modules) and http_fetch
 * are imported only for a job that enables them: a job without them does not load them before its first
 * model request.
 */
export async function builtinTools(
  config: ToolsConfig | undefined,
  options: BuiltinToolsOptions,
): Promise<Tool[]> {
  const jobDir = resolve(options.job_dir);
  const tools: Tool[] = [];
  const { shell, read_file, write_file, list_dir, http_fetch } = config ?? {};
  if (shell) {
    const [{ shellTool }, { shellSandboxSettings }] = await Promise.all([
      import("./shell/tool.ts"),
      import("./shell/sandbox.ts"),
    ]);
    tools.push(shellTool({
      ...(shell.allow ? { allow: shell.allow } : {}),
      ...(shell.deny ? { deny: shell.deny } : {}),
      cwd: resolve(jobDir, shell.cwd ?? "."),
      timeoutMs: parseDuration(shell.timeout ?? DEFAULTS.shellTimeout),
      maxOutput: parseSize(shell.max_output ?? DEFAULTS.shellMaxOutput),
      sandbox: options.sandbox?.mode === "off"
        ? "off"
        : options.sandbox?.mode === "on"
        ? options.sandbox
        : shellSandboxSettings(config, { job_dir: jobDir }),
      ...(options.probe ? { probe: options.probe } : {}),
    }));
  }
  if (read_file) {
    tools.push(readFileTool(pathScope("read_file", jobDir, read_file.paths), {
      maxBytes: parseSize(read_file.max_bytes ?? DEFAULTS.readMaxBytes),
    }));
  }
  if (write_file) {
    tools.push(writeFileTool(pathScope("write_file", jobDir, write_file.paths), {
      maxBytes: parseSize(write_file.max_bytes ?? DEFAULTS.writeMaxBytes),
      ...(options.protect ? { protect: options.protect } : {}),
    }));
  }
  if (list_dir) {
    tools.push(listDirTool(pathScope("list_dir", jobDir, list_dir.paths), {
      maxEntries: list_dir.max_entries ?? DEFAULTS.listMaxEntries,
    }));
  }
  if (http_fetch) {
    const { httpFetchTool } = await import("./http_fetch.ts");
    tools.push(httpFetchTool({
      hosts: http_fetch.hosts ?? [],
      timeoutMs: parseDuration(http_fetch.timeout ?? DEFAULTS.fetchTimeout),
      maxOutput: parseSize(http_fetch.max_output ?? DEFAULTS.fetchMaxOutput),
      fetch: options.fetch ?? globalThis.fetch,
    }));
  }
  return tools;
}
