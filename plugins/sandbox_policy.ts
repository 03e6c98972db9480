/**
 * How one plugin process is spawned (docs/plugins.md): inside the OS sandbox (bubblewrap), with a policy derived
 * from the same grant that becomes its `--allow-*` flags. Two layers hold the same line, so what Deno's
 * permission checks miss (a symlink's target, a child process, a hard-coded path) the kernel still refuses:
 * - visible: the plugin's root (its real directory, or its single module file), the deno binary (that
 *   one file), the system directories programs need, and the granted `read`, `ffi` and `run` paths. `read: true`
 *   shows the host read-only, with the store and credentials hidden;
 * - writable: only the granted `write` paths (they must exist: a bind needs a target), and a private /tmp
 *   and /dev/shm, each bounded by `max_memory` (files there are memory no resident set shows). `write: true`
 *   is refused: it would make the host writable, which no sandbox then bounds;
 * - network: none unless `net` is granted; a host list keeps the sandbox's own network namespace and goes
 *   through the filtering proxy (runtime/sandbox/net_bridge.ts), so it holds for every program the plugin
 *   runs; Deno's `--allow-net` holds the same list for the plugin's own code;
 * - environment: the granted variables only (bwrap adds PWD, the working directory's path);
 * - cwd: the job directory, shown empty unless granted, so relative paths (`./notes`) mean what they mean on
 *   the host;
 * - processes: own PID namespace and /proc; everything inside dies with the plugin or with Hermes.
 * `sandbox: off` on the entry runs it on the host as before (Deno's permissions only, `setpriv --pdeathsig`).
 */
import { basename, dirname, isAbsolute } from "../runtime/core/path.ts";
import { realPathOrNull } from "../runtime/core/fs.ts";
import { homeSecrets, hostSecrets } from "../runtime/sandbox/host_secrets.ts";
import { SYSTEM_DIRS } from "../runtime/sandbox/policy.ts";
import { type Bubblewrap, type SandboxPolicy, wrapCommand } from "../runtime/sandbox/sandbox.ts";
import type { NetBridge } from "../runtime/sandbox/net_bridge.ts";
import { parentDeathLauncher } from "./parent_death.ts";
import type { Permissions } from "./permissions.ts";

/** What `new Deno.Command(cmd, { args, env, cwd, clearEnv: true })` starts. */
export interface PluginCommand {
  cmd: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** A host list's bridge: attached once spawned, closed when the process ends (PluginProcess). */
  bridge?: NetBridge;
}

export interface PluginCommandOptions {
  /** The working bubblewrap, or "off" for an entry that opted out. */
  sandbox: Bubblewrap | "off";
  /** The grant with `run` programs resolved to absolute paths (`resolveRunGrant`), paths absolute. */
  granted: Permissions;
  /** The plugin's real directory, or its module file. */
  root: string;
  job_dir: string;
  /** The plugin's whole environment (`grantedEnv`). */
  env: Record<string, string>;
  /** Host paths hidden when `read: true` shows the host (the store's files, the Hermes home). */
  hide?: readonly string[];
  /** Kept read-only below the write grants (a protected job's `.git` and own files). */
  read_only?: readonly string[];
  /** $HOME of the host, whose credentials are hidden when `read: true` shows the host. */
  home?: string;
  /**
   * The plugin's `max_memory` in bytes: its private /tmp and /dev/shm may hold no more each, since files
   * there live in memory outside any process's resident set (which the watchdog counts).
   */
  max_memory_bytes?: number;
  /** The bridge of a granted host list (required with one inside the sandbox). */
  bridge?: NetBridge;
}

/** `argv` (deno and its arguments) as the plugin's process: wrapped in the sandbox, or on the host. */
export function pluginCommand(argv: readonly string[], options: PluginCommandOptions): PluginCommand {
  if (options.sandbox === "off") {
    const [cmd, ...args] = [...parentDeathLauncher(), ...argv];
    return { cmd: cmd!, args, env: options.env, cwd: options.job_dir };
  }
  // The binary itself runs inside, not a link to it: only that one file of its install is shown.
  const deno = realPathOrNull(argv[0]!) ?? argv[0]!;
  const wrapped = wrapCommand([deno, ...argv.slice(1)], pluginSandboxPolicy(deno, options), {
    bwrap: options.sandbox,
    ...(options.bridge ? { bridge: options.bridge } : {}),
  });
  return {
    cmd: wrapped.cmd,
    args: wrapped.args,
    env: wrapped.env,
    cwd: wrapped.cwd,
    ...(options.bridge ? { bridge: options.bridge } : {}),
  };
}

/** The bubblewrap policy of a plugin run by the deno at `denoPath`. Throws RangeError for `write: true`. */
export function pluginSandboxPolicy(denoPath: string, options: PluginCommandOptions): SandboxPolicy {
  const { granted } = options;
  if (granted.write === true) {
    throw new RangeError(
      "Cannot grant write: true inside the OS sandbox: it would make the whole host writable; list the " +
        "paths the plugin writes (write: [./out]) or opt out with sandbox: off on the entry",
    );
  }
  const list = (grant: boolean | string[] | undefined) => Array.isArray(grant) ? grant : [];
  const programs = granted.run === true
    ? (options.env.PATH ?? "").split(":").filter(isAbsolute)
    : list(granted.run).flatMap(programDirs);
  const read = [
    options.root,
    // Deno is one self-contained file. Its directory or install prefix could hold anything: a deno under
    // /tmp/ci/bin or $HOME/.npm would show all of /tmp/ci or the npm cache, and the job directory with it.
    realPathOrNull(denoPath) ?? denoPath,
    ...list(granted.read),
    ...list(granted.ffi),
    ...programs,
  ].filter((path) => !SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(`${dir}/`)));
  const showsHost = granted.read === true;
  return {
    visible: showsHost ? "all" : "only_granted",
    read: [...new Set(read)],
    write: list(granted.write),
    ...(options.read_only ? { read_only: options.read_only } : {}),
    ...(showsHost
      ? {
        hide: [
          ...(options.hide ?? []),
          ...(options.home ? homeSecrets(options.home) : []),
          ...hostSecrets(),
        ],
      }
      : {}),
    net: granted.net === true || (list(granted.net).length > 0 ? list(granted.net) : false),
    ...(options.max_memory_bytes ? { scratch_bytes: options.max_memory_bytes } : {}),
    // deno must resolve a cache directory even though the plugin loads nothing from it; without HOME it
    // asks the passwd database, which the sandbox does not show (and a CI user's home may not exist).
    env: { DENO_DIR: "/tmp/.deno", ...options.env },
    cwd: options.job_dir,
  };
}

/** A program's directory (the link's and the target's) and, above a `bin/`, its install prefix. */
function programDirs(program: string): string[] {
  const dirs = new Set<string>();
  for (const file of [program, realPathOrNull(program)]) {
    if (file === null) continue;
    const dir = dirname(file);
    dirs.add(basename(dir) === "bin" && dirname(dir) !== "/" ? dirname(dir) : dir);
  }
  return [...dirs];
}
