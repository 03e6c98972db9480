/**
 * What `tools.shell.sandbox` means (docs/sandbox.md): the defaults, the check a session runs before
 * its first model call, and the bubblewrap policy of each command (runtime/sandbox does the mounting).
 *
 * Defaults, chosen like Codex's non-interactive default (read-only, only the workspace writable):
 * - read: the whole host, read-only, with secrets hidden (below $HOME, see sandbox/host_secrets.ts; the Hermes home and
 *   store, /etc/shadow, SSH host keys); `read: [...]` instead shows only those paths and the system
 *   directories programs need;
 * - write: the roots listed in `tools.write_file.paths` (what the job already lets the model write), else
 *   nothing; a private /tmp is always writable. Not the job directory: it holds the job file, its plugins
 *   and often a `.git` whose hooks and config run later, outside any sandbox;
 * - net: false — an empty network namespace; `true` shares the host's network; a host list keeps the empty
 *   namespace and adds a bridge to a filtering proxy (sandbox/net_bridge.ts) that only those hosts pass;
 * - env: only the session's tool environment; a fresh PID namespace and /proc; everything started inside
 *   is killed when the command ends.
 */
import { resolve } from "../../core/path.ts";
import type { ToolsConfig } from "../../config/job_schema.ts";
import { ValidationError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { probeOptions, probeSandbox, type SandboxProbe } from "../../sandbox/probe.ts";
import { type Bubblewrap, type SandboxPolicy, wrapCommand } from "../../sandbox/sandbox.ts";
import { existsSync, realPathOrNull } from "../../core/fs.ts";
import { enclosingRepo } from "../../sandbox/git_repo.ts";
import { configuredLimits, PRIVATE_DIRS } from "../../sandbox/policy.ts";
import { globalGitConfigs, homeSecrets, hostSecrets, runnerSecrets } from "../../sandbox/host_secrets.ts";
import { findBridgeTools } from "../../sandbox/net_bridge.ts";
import { parseHostList } from "../../sandbox/net_hosts.ts";
import { findDenoOrNull } from "../../sandbox/deno_path.ts";

/** The shell tool's sandbox settings, paths absolute. */
export interface ShellSandbox {
  /** null: not probed yet (the tool probes on its first call, with the tool environment's PATH). */
  bwrap: Bubblewrap | null;
  /** null: the whole host read-only; else the only visible paths. */
  read: string[] | null;
  /** `required` roots were listed in `sandbox.write` (created at the check); others are skipped while missing. */
  write: { path: string; required: boolean }[];
  hide: string[];
  /** Git configs shown without their credentials (the host user's global ones, a CI runner's checkouts). */
  gitConfigs?: string[];
  /** Kept read-only below the write roots: a protected job's `.git` and own files (core/protected_paths.ts). */
  read_only?: string[];
  /** false: none; true: the host's network; a list: only those hosts, through the proxy. */
  net: boolean | string[];
  /** `sandbox.limits`, as policy fields (defaults where absent). */
  limits?: Pick<SandboxPolicy, "limits" | "scratch_bytes">;
}

/** What `checkToolSandbox` hands to `builtinTools`: the settings with a working bwrap, or the opt-out. */
export type ToolSandbox = ({ mode: "on" } & ShellSandbox & { bwrap: Bubblewrap }) | { mode: "off" };

/** "on" or "off" for a job with a shell tool (the run's result carries `sandbox: "off"`); null without one. */
export function sandboxMode(tools: ToolsConfig | undefined): "on" | "off" | null {
  if (!tools?.shell) return null;
  return tools.shell.sandbox === "off" ? "off" : "on";
}

/** The settings `tools` ask for, paths resolved against the job directory; "off" for the opt-out. */
export function shellSandboxSettings(
  tools: ToolsConfig | undefined,
  options: { job_dir: string; hide?: readonly string[]; read_only?: readonly string[] },
): ShellSandbox | "off" {
  const config = tools?.shell?.sandbox;
  if (config === "off") return "off";
  const at = (path: string) => resolve(options.job_dir, path);
  const listed = tools?.write_file?.paths;
  const write = config?.write
    ? config.write.map((path) => ({ path: at(path), required: true }))
    : (listed ?? []).map((path) => ({ path: at(path), required: false }));
  return {
    bwrap: null,
    read: config?.read ? config.read.map(at) : null,
    write,
    hide: [...(config?.hide ?? []).map(at), ...(options.hide ?? [])],
    ...(options.read_only?.length ? { read_only: [...options.read_only] } : {}),
    net: config?.net ?? false,
    limits: configuredLimits(config?.limits),
  };
}

export interface ToolSandboxOptions {
  job_dir: string;
  /** The process environment snapshot: PATH (to find bwrap), HOME, HERMES_HOME, HERMES_BWRAP. */
  env: Readonly<Record<string, string>>;
  /** More host paths to hide: the Hermes home and the store file in use (`--home`, `--db`). */
  hide?: readonly string[];
  /** Paths kept read-only below the write roots (a protected job's `.git` and own files). */
  read_only?: readonly string[];
  /** Where the `sandbox: off` warning goes. */
  log?: Logger;
  /** The session's shared probe (`probeOnce`); default: probe now. */
  probe?: () => Promise<SandboxProbe>;
}

/**
 * Run by the session opener before any model call when the job has a shell tool: finds and tries
 * bubblewrap, creates the listed write roots, and checks the policy resolves (cwd visible, …). Throws a
 * ValidationError (exit 2) with the reason and how to fix it or opt out; warns for `sandbox: off`.
 * Returns null without a shell tool.
 */
export async function checkToolSandbox(
  tools: ToolsConfig | undefined,
  options: ToolSandboxOptions,
): Promise<ToolSandbox | null> {
  if (!tools?.shell) return null;
  const { env } = options;
  const runner = runnerSecrets(env);
  const hide = [
    ...(options.hide ?? []),
    ...(env.HERMES_HOME ? [resolve(env.HERMES_HOME)] : []),
    ...(env.HOME ? homeSecrets(env.HOME) : []),
    ...runner.hide,
  ];
  const configured = shellSandboxSettings(tools, {
    job_dir: options.job_dir,
    hide,
    ...(options.read_only ? { read_only: options.read_only } : {}),
  });
  const settings = configured === "off" ? configured : {
    ...configured,
    gitConfigs: [...globalGitConfigs(env.HOME, env.XDG_CONFIG_HOME), ...runner.gitConfigs],
  };
  if (settings === "off") {
    options.log?.warn(
      "tools.shell.sandbox is off: shell commands run on this host unsandboxed, with its files, network " +
        "and processes reachable; the result is marked sandbox: off",
    );
    return { mode: "off" };
  }
  const probe = await (options.probe ?? (() => probeSandbox(probeOptions(env))))();
  if (!probe.ok) {
    throw new ValidationError(`Cannot run the shell tool in its OS sandbox: ${probe.reason}; ${probe.hint}`);
  }
  const { ok: _ok, ...bwrap } = probe;
  for (const root of settings.write) {
    if (root.required) Deno.mkdirSync(root.path, { recursive: true });
  }
  const cwd = resolve(options.job_dir, tools.shell.cwd ?? ".");
  if (Array.isArray(settings.net)) {
    try {
      parseHostList(settings.net);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw new ValidationError(`tools.shell.sandbox.net: ${error.message}`);
    }
    const tools = findBridgeTools(findDenoOrNull(env));
    if (typeof tools === "string") {
      throw new ValidationError(`Cannot enforce tools.shell.sandbox.net's host list here: ${tools}`);
    }
  }
  try {
    // The host list's bridge is opened per command; the check needs only the mounts to resolve.
    wrapCommand(["true"], { ...sandboxPolicy(settings, { env: {}, cwd }), net: false }, { bwrap });
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(`tools.shell.sandbox: ${error.message}`);
  }
  return { mode: "on", ...settings, bwrap };
}

/** The bwrap policy of one command: grants re-resolved now, secrets of the tool environment's HOME hidden. */
export function sandboxPolicy(
  sandbox: ShellSandbox,
  call: { env: Record<string, string>; cwd: string },
): SandboxPolicy {
  const home = call.env.HOME;
  return {
    visible: sandbox.read ? "only_granted" : "all",
    // The working directory stays visible when it lies in a directory made private (/tmp, /run), and so
    // does the repository it is in (read-only unless a write root), so git works there.
    read: sandbox.read ?? [call.cwd, ...privateRepo(call.cwd)],
    write: sandbox.write.filter((root) => root.required || existsSync(root.path, { follow: true })).map((
      root,
    ) => root.path),
    hide: [...new Set([...sandbox.hide, ...(home ? homeSecrets(home) : []), ...hostSecrets()])],
    git_configs: [
      ...new Set([...sandbox.gitConfigs ?? [], ...globalGitConfigs(home, call.env.XDG_CONFIG_HOME)]),
    ],
    ...(sandbox.read_only ? { read_only: sandbox.read_only } : {}),
    net: sandbox.net,
    ...sandbox.limits,
    // bwrap sets PWD to the working directory, as the shell itself would; saying so spares an exec.
    env: { ...call.env, PWD: call.cwd },
    cwd: call.cwd,
  };
}

/** The repository `cwd` lies in, when that is below a directory the sandbox makes private (/tmp, …). */
function privateRepo(cwd: string): string[] {
  const repo = enclosingRepo(realPathOrNull(cwd) ?? cwd);
  if (repo === null) return [];
  const below = (dir: string) => repo.root.startsWith(`${dir}/`);
  return PRIVATE_DIRS.some(below) ? [repo.root, ...repo.outside] : [];
}

/** The shell to run commands with: bash from PATH (or the usual places), else sh; absolute, found on the host. */
export function findShell(path: string | undefined): string {
  const dirs = [...(path ?? "").split(":").filter((dir) => dir.startsWith("/")), "/bin", "/usr/bin"];
  for (const name of ["bash", "sh"]) {
    for (const dir of dirs) {
      try {
        if (Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
      } catch {
        // not here
      }
    }
  }
  return "sh";
}
