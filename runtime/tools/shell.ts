/**
 * The `shell {command}` tool. Every simple command of the line is checked against `tools.shell.allow`
 * and `tools.shell.deny` first (rules in shell_policy.ts); a denied call never runs. Without `allow`,
 * every command that is not denied may run: listing `shell` in the job enables it.
 *
 * An allowed command runs with `bash -c` (or `sh -c` where bash is missing) in its own process group,
 * in `cwd` (resolved against the job directory; default the job directory), with exactly the
 * session's tool environment, stdin closed, stdout and stderr combined and capped at `max_output`.
 * On timeout or cancellation the whole group is killed with SIGKILL; processes the command left in the
 * background are killed when it exits.
 */
import { resolve } from "node:path";
import { denied, type Tool, type ToolContext, type ToolOutcome } from "./tool.ts";
import { checkShellCommand, type ShellRules } from "./shell_policy.ts";
import { CappedBytes, readCapped } from "./_capped.ts";
import { formatDuration } from "../core/duration.ts";

export interface ShellToolOptions extends ShellRules {
  /** Absolute working directory. */
  cwd: string;
  timeoutMs: number;
  maxOutput: number;
}

/** Longer command lines are refused rather than checked. */
const MAX_COMMAND_LENGTH = 64 * 1024;

export function shellTool(options: ShellToolOptions): Tool {
  const rules: ShellRules = {
    ...(options.allow ? { allow: options.allow } : {}),
    ...(options.deny ? { deny: options.deny } : {}),
  };
  const allowed = options.allow ? ` Allowed commands: ${options.allow.join(", ")}.` : "";
  return {
    spec: {
      name: "shell",
      description: `Run a shell command with bash and return its combined stdout and stderr.${allowed} ` +
        "Redirections to files are not allowed; use read_file and write_file for files.",
      parameters: {
        type: "object",
        properties: { command: { type: "string", description: "The command line to run" } },
        required: ["command"],
        additionalProperties: false,
      },
    },
    async run(args, context) {
      const command = args.command;
      if (typeof command !== "string" || command.trim() === "") {
        return {
          status: "error",
          content: `error: invalid arguments for shell: "command" must be a non-empty string`,
        };
      }
      if (command.length > MAX_COMMAND_LENGTH) {
        return denied(`the command is ${command.length} characters long; the limit is ${MAX_COMMAND_LENGTH}`);
      }
      const reason = checkShellCommand(command, rules);
      if (reason) return denied(reason);
      return await runCommand(command, options, context);
    },
  };
}

async function runCommand(
  command: string,
  options: ShellToolOptions,
  context: ToolContext,
): Promise<ToolOutcome> {
  if (context.signal.aborted) return { status: "error", content: "error: cancelled" };
  const cwd = resolve(options.cwd);
  try {
    if (!(await Deno.stat(cwd)).isDirectory) throw new Deno.errors.NotADirectory();
  } catch {
    return { status: "error", content: `error: Cannot run shell in "${cwd}": it is not a directory` };
  }
  const child = spawnShell(command, cwd, context.env);
  const output = new CappedBytes(options.maxOutput);
  let stopped: "timeout" | "cancelled" | null = null;
  const killGroup = () => {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  };
  const stop = (why: "timeout" | "cancelled") => {
    stopped ??= why;
    killGroup();
  };
  const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
  const onAbort = () => stop("cancelled");
  context.signal.addEventListener("abort", onAbort, { once: true });
  let status: Deno.CommandStatus;
  try {
    const exited = child.status.then((s) => {
      killGroup();
      return s;
    });
    await Promise.all([
      readCapped(child.stdout, output, { stopWhenFull: false }),
      readCapped(child.stderr, output, { stopWhenFull: false }),
    ]);
    status = await exited;
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener("abort", onAbort);
  }
  const text = output.text();
  if (stopped === "timeout") {
    return {
      status: "error",
      content: join(`timed out after ${formatDuration(options.timeoutMs)} (killed)`, text),
    };
  }
  if (stopped === "cancelled") return { status: "error", content: join("cancelled (killed)", text) };
  if (status.success) return { status: "ok", content: text === "" ? "(no output)" : text };
  const header = status.signal ? `killed by signal ${status.signal}` : `exit code ${status.code}`;
  return { status: "error", content: join(header, text) };
}

function spawnShell(command: string, cwd: string, env: Record<string, string>): Deno.ChildProcess {
  const spawn = (shell: string) =>
    new Deno.Command(shell, {
      args: ["-c", command],
      cwd,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // A new process group, so that a timeout can kill everything the command started.
      detached: true,
    }).spawn();
  try {
    return spawn("bash");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return spawn("sh");
  }
}

function join(header: string, text: string): string {
  return text === "" ? header : `${header}\n${text}`;
}
