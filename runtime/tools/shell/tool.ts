/**
 * The `shell {command}` tool. Every simple command of the line is checked against `tools.shell.allow`
 * and `tools.shell.deny` (rules in policy.ts) once per call, when the gate asks what the call needs; the
 * scope it grants names the command line as judged, and that line alone runs. A denied call never runs.
 * Without `allow`, every command that is not denied may run: listing `shell` in the job enables it.
 *
 * An allowed command runs with the host's bash (or sh where there is no bash) `-c`, inside the OS sandbox
 * (sandbox.ts: read-only host with secrets hidden, only the write roots writable, private /tmp, no
 * network, own PID namespace and /proc), in `cwd` (resolved against the job directory; default the job
 * directory), with exactly the session's tool environment, stdin closed, stdout and stderr combined and
 * capped at `max_output`, and git settings that ignore planted configuration (git_env.ts). On timeout or cancellation the command is killed with SIGKILL; when it ends,
 * everything it started is killed with its PID namespace (`setsid` and double forks included). With
 * `sandbox: off` the command runs on the host in its own process group, which is what gets killed.
 */
import { dirname, resolve } from "../../core/path.ts";
import {
  ALLOWED,
  type CallNeeds,
  denied,
  NO_SCOPE,
  type Tool,
  type ToolContext,
  type ToolOutcome,
} from "../tool.ts";
import { evaluateShellCommand, type ShellRules } from "./policy.ts";
import { findShell, sandboxPolicy, type ShellSandbox } from "./sandbox.ts";
import { CappedBytes, readCapped } from "../_capped.ts";
import { gitEnvironment } from "./git_env.ts";
import { formatDuration } from "../../core/duration.ts";
import { errorMessage, ValidationError } from "../../core/errors.ts";
import type { SandboxProbe } from "../../sandbox/probe.ts";
import { type Bubblewrap, wrapCommand } from "../../sandbox/sandbox.ts";
import { findBridgeTools, forwarderEnv, type NetBridge, openNetBridge } from "../../sandbox/net_bridge.ts";
import type { Refusal } from "../../sandbox/net_proxy.ts";
import { parseHostList } from "../../sandbox/net_hosts.ts";
import { findDenoOrNull } from "../../sandbox/deno_path.ts";

export interface ShellToolOptions extends ShellRules {
  /** Absolute working directory. */
  cwd: string;
  timeoutMs: number;
  maxOutput: number;
  /** The OS sandbox of every command, or "off" (the explicit opt-out). */
  sandbox: ShellSandbox | "off";
  /**
   * The session's one sandbox probe, for a sandbox not probed yet (`bwrap: null`: a replayed session,
   * which checked none); the tool never probes on its own. Absent: such a call fails.
   */
  probe?: () => Promise<SandboxProbe>;
  /** Evaluates the policy on a command line, once per call (default evaluateShellCommand). */
  evaluate?: typeof evaluateShellCommand;
}

/** Longer command lines are refused rather than checked. */
const MAX_COMMAND_LENGTH = 64 * 1024;

export function shellTool(options: ShellToolOptions): Tool {
  const rules: ShellRules = {
    ...(options.allow ? { allow: options.allow } : {}),
    ...(options.deny ? { deny: options.deny } : {}),
  };
  const evaluate = options.evaluate ?? evaluateShellCommand;
  const allowed = options.allow ? ` Allowed commands: ${options.allow.join(", ")}.` : "";
  const bwrapFor = async (sandbox: ShellSandbox): Promise<Bubblewrap> => {
    if (sandbox.bwrap) return sandbox.bwrap;
    if (!options.probe) throw new ValidationError("Cannot run shell in its OS sandbox: it was not probed");
    const probe = await options.probe();
    if (!probe.ok) {
      throw new ValidationError(`Cannot run shell in its OS sandbox: ${probe.reason}; ${probe.hint}`);
    }
    return probe;
  };
  return {
    spec: {
      name: "shell",
      description: `Run a shell command with bash and return its combined stdout and stderr.${allowed} ` +
        "Redirections to files are not allowed; use read_file and write_file for files." +
        sandboxNote(options.sandbox),
      parameters: {
        type: "object",
        properties: { command: { type: "string", description: "The command line to run" } },
        required: ["command"],
        additionalProperties: false,
      },
    },
    needs(args): CallNeeds {
      const command = args.command;
      if (typeof command !== "string" || command.trim() === "") return { verdict: ALLOWED, scope: NO_SCOPE };
      if (command.length > MAX_COMMAND_LENGTH) {
        return { verdict: { allowed: false, reason: tooLong(command), rule: null }, scope: NO_SCOPE };
      }
      // The one evaluation of the call: what it decides is the command line the call runs, as judged.
      const judged = evaluate(command, rules);
      const scope = { shell: { command, sandbox: options.sandbox } };
      if (judged.reason === null) return { verdict: ALLOWED, scope };
      if (!judged.askable) {
        return { verdict: { allowed: false, reason: judged.reason, rule: null }, scope: NO_SCOPE };
      }
      // Only `allow` keeps it out: an approver may let this line run, in the same sandbox.
      const program = command.trim().split(/\s+/)[0]!;
      return {
        verdict: { allowed: false, reason: judged.reason, rule: `tools.shell.allow: ["${program} *"]` },
        scope,
      };
    },
    async run(args, context, scope) {
      if (typeof args.command !== "string" || args.command.trim() === "") {
        return {
          status: "error",
          content: `error: invalid arguments for shell: "command" must be a non-empty string`,
        };
      }
      const granted = scope.shell;
      if (granted === undefined || granted.command !== args.command) {
        return denied("the call was granted no command line to run");
      }
      const { command } = granted;
      let spawn: Spawn;
      try {
        spawn = await spawner(command, { ...options, sandbox: granted.sandbox }, context, bwrapFor);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return { status: "error", content: `error: ${errorMessage(error)}` };
      }
      return await runCommand(spawn, options, context);
    },
  };
}

/** How to start the command, and with a host list the network bridge that lives as long as it. */
interface Spawn {
  start: () => Deno.ChildProcess;
  bridge: NetBridge | null;
  refusals: Refusal[];
}

/**
 * How to start `command`: wrapped in bwrap (its policy resolved now, so grants follow what the paths name
 * at this call), or on the host for `sandbox: off`. Throws a ValidationError for what the call cannot do.
 */
async function spawner(
  command: string,
  options: ShellToolOptions,
  context: ToolContext,
  bwrapFor: (sandbox: ShellSandbox) => Promise<Bubblewrap>,
): Promise<Spawn> {
  const cwd = resolve(options.cwd);
  try {
    if (!(await Deno.stat(cwd)).isDirectory) throw new Deno.errors.NotADirectory();
  } catch {
    throw new ValidationError(`Cannot run shell in "${cwd}": it is not a directory`);
  }
  // Host programs (the shell, bwrap, the bridge's deno) are found with Hermes's own environment: a job's
  // `env: {PATH}` would choose the program its allow-list is judged against.
  const shell = findShell(context.host_env.PATH);
  const io = { stdin: "null", stdout: "piped", stderr: "piped" } as const;
  const writeRoots = options.sandbox === "off" ? [] : options.sandbox.write.map((root) => root.path);
  const env = gitEnvironment(context.env, { writeRoots, realPath });
  if (options.sandbox === "off") {
    // A new process group, so that a timeout can kill everything the command started.
    const host = { args: ["-c", command], cwd, env, clearEnv: true, detached: true, ...io };
    return { start: () => new Deno.Command(shell, host).spawn(), bridge: null, refusals: [] };
  }
  const bwrap = await bwrapFor(options.sandbox);
  const policy = sandboxPolicy(options.sandbox, { env, cwd });
  const refusals: Refusal[] = [];
  const bridge = Array.isArray(policy.net)
    ? await shellBridge(policy.net, bwrap, context, (refusal) => refusals.push(refusal))
    : null;
  let wrapped;
  try {
    wrapped = wrapCommand([shell, "-c", command], policy, { bwrap, ...(bridge ? { bridge } : {}) });
  } catch (error) {
    await bridge?.close();
    throw error;
  }
  // Its own process group too: a kill reaches bwrap, whose death takes the sandbox's PID namespace along.
  return {
    start: () => new Deno.Command(wrapped.cmd, { ...wrapped, detached: true, ...io }).spawn(),
    bridge,
    refusals,
  };
}

/** The proxy and bridge of one command's host list (net_bridge.ts). */
async function shellBridge(
  hosts: readonly string[],
  bwrap: Bubblewrap,
  context: ToolContext,
  onRefusal: (refusal: Refusal) => void,
): Promise<NetBridge> {
  // The bridge runs on the host, outside the sandbox: its deno and environment are Hermes's, never the
  // job's (`env: {HERMES_DENO: ./x.sh}` would run the job's program there).
  const tools = findBridgeTools(findDenoOrNull(context.host_env));
  if (typeof tools === "string") {
    throw new ValidationError(`Cannot enforce tools.shell.sandbox.net's host list: ${tools}`);
  }
  return await openNetBridge(parseHostList(hosts), {
    privateDir: dirname(bwrap.seccomp.path),
    tools,
    env: forwarderEnv(context.host_env),
    onRefusal,
  });
}

async function runCommand(
  spawn: Spawn,
  options: ShellToolOptions,
  context: ToolContext,
): Promise<ToolOutcome> {
  if (context.signal.aborted) {
    await spawn.bridge?.close();
    return { status: "error", content: "error: cancelled" };
  }
  let child: Deno.ChildProcess;
  try {
    child = spawn.start();
  } catch (error) {
    await spawn.bridge?.close();
    throw error;
  }
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
  // A bridge that cannot start leaves the command without any route (fail closed); say why, and stop it.
  let bridgeError: string | null = null;
  const attached = spawn.bridge?.attach().catch((error) => {
    bridgeError = errorMessage(error);
    killGroup();
  });
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
    await spawn.bridge?.close();
    await attached;
  }
  if (bridgeError !== null) return { status: "error", content: `error: ${bridgeError}` };
  const text = output.text() + refusalNote(spawn.refusals);
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

/** The proxy's refusals, so the model (and a reviewer) sees which hosts the host list kept out. */
function refusalNote(refusals: readonly Refusal[]): string {
  if (refusals.length === 0) return "";
  const seen = [...new Set(refusals.map((r) => `${r.host}:${r.port} ${r.reason}`))];
  return `\n[sandbox network: refused ${seen.join("; ")}]`;
}

function tooLong(command: string): string {
  return `the command is ${command.length} characters long; the limit is ${MAX_COMMAND_LENGTH}`;
}

/** What the model should know about where its commands run, so it does not waste calls finding out. */
function sandboxNote(sandbox: ShellSandbox | "off"): string {
  if (sandbox === "off") return "";
  const writable = sandbox.write.map((root) => root.path);
  return ` Commands run in a sandbox: files are read-only except ${[...writable, "/tmp"].join(", ")}` +
    (sandbox.net === true
      ? "."
      : Array.isArray(sandbox.net)
      ? `; the network is reachable only through the HTTP(S) proxy set in HTTPS_PROXY, for these hosts: ${
        sandbox.net.join(", ")
      }.`
      : "; there is no network.");
}

function realPath(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

function join(header: string, text: string): string {
  return text === "" ? header : `${header}\n${text}`;
}
