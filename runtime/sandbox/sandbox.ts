/**
 * The OS sandbox (docs/sandbox.md): turns a command and a policy into the `bwrap` invocation that
 * runs it. bubblewrap does the namespace work; this module only decides the flags:
 * - a new user, PID (own /proc), IPC, UTS and cgroup namespace, and a new network namespace unless
 *   the policy grants the network;
 * - the host root read-only (or, `only_granted`, a read-only root holding only the system directories
 *   needed to exec and the grants), the write roots read-write, a private /tmp, /var/tmp and /run, a
 *   fresh read-only /dev with a private /dev/shm (scratch filesystems sized by `scratch_bytes`), /proc/sys
 *   read-only;
 * - `--die-with-parent`: bwrap exits with the command's status (or is killed on a timeout), its PID-1
 *   reaper inside then gets SIGKILL, and the kernel kills everything left in the PID namespace (`setsid`
 *   children included) — right after, not before, the caller sees bwrap's exit;
 * - `--new-session`, so a command cannot push keystrokes into the caller's terminal (TIOCSTI);
 * - a seccomp filter that refuses the socket families no sandbox needs (vsock, packet, …), and without the
 *   host's whole network new unix sockets too (seccomp.ts);
 * - resource limits set by the launcher shell before it execs bwrap (launcher.ts, cgroup.ts);
 * - repository configs holding credentials covered by copies without them (git_repo.ts).
 * The environment travels in the spawn's environment, not as `--setenv` argv: argv of every process is
 * world-readable in the host's /proc, environ is not — except the variables that steer how a program starts
 * (the loader's, bash's start-up), which `env` sets inside so that the host's launcher and bwrap never see
 * them. bwrap adds PWD; `env -u PWD` takes it out again unless the policy sets it.
 */
import { filterIntact, launchArgs, type Launcher } from "./launcher.ts";
import type { SeccompArch } from "./seccomp.ts";
import { type Cgroups, commandCgroups } from "./cgroup.ts";
import {
  DEFAULT_SCRATCH_BYTES,
  PRIVATE_DIRS,
  type ResolvedPolicy,
  resolvePolicy,
  type SandboxPolicy,
  SMALL_SCRATCH_BYTES,
  SYSTEM_DIRS,
} from "./policy.ts";
import { readTextOrNull, realPathOrNull } from "../core/fs.ts";
import { enclosingRepo, withoutCredentials } from "./git_repo.ts";
import { dirname, join } from "../core/path.ts";
import type { NetBridge } from "./net_bridge.ts";

export type { SandboxPolicy } from "./policy.ts";

/** A bubblewrap that `probeSandbox` ran successfully on this machine. */
export interface Bubblewrap {
  /** Absolute path of the `bwrap` binary. */
  path: string;
  /** `0.8.0` */
  version: string;
  /** bwrap ≥ 0.8 can forbid nested user namespaces inside (kernel attack surface, mount games). */
  disableUserns: boolean;
  /** The host shell that sets the rlimits and opens the filter before it `exec`s bwrap. */
  launcher: Launcher;
  /**
   * The seccomp filter files (`installFilter`): `path` refuses new AF_UNIX sockets without the host's network;
   * `host_network`, for `net: true`, only refuses the families no sandbox needs (AF_VSOCK, AF_PACKET, …).
   */
  seccomp: { path: string; host_network: string; arch: SeccompArch };
  /**
   * Where each command gets its own pids and memory cgroups (`findCgroups`); a null one leaves that limit to
   * its rlimit alone (RLIMIT_NPROC, RLIMIT_DATA, which are set either way).
   */
  cgroups: Cgroups;
}

/** Spawn exactly this (`new Deno.Command(w.cmd, { args: w.args, env: w.env, clearEnv: true, cwd: w.cwd })`). */
export interface WrappedCommand {
  cmd: string;
  args: string[];
  /** The command's whole environment: spawn with `clearEnv: true` (node: `env` replaces the parent's). */
  env: Record<string, string>;
  clearEnv: true;
  cwd: string;
}

/** /etc files a dynamically linked program needs to start, and those it needs to reach the network. */
const ETC_EXEC = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf"];
const ETC_NET = [
  "resolv.conf",
  "hosts",
  "host.conf",
  "gai.conf",
  "ssl",
  "ca-certificates",
  "pki",
  "crypto-policies",
];
/** Kernel knobs writable by uid 0 even without capabilities; bwrap covers some, not /proc/sys. */
const PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"];

export function wrapCommand(
  argv: readonly string[],
  policy: SandboxPolicy,
  options: { bwrap: Bubblewrap; bridge?: NetBridge },
): WrappedCommand {
  if (argv.length === 0) throw new TypeError("Cannot wrap a command in the sandbox: argv is empty");
  const resolved = resolvePolicy(policy);
  const { host, inside } = splitStartupEnv(policy.env);
  const bridge = resolved.hosts === null ? null : options.bridge ?? null;
  if (resolved.hosts !== null && bridge === null) {
    throw new TypeError(
      "Cannot wrap a command with a host list in the sandbox: no network bridge was opened",
    );
  }
  const args = [
    "--unshare-user",
    // As any user but root, the bridge must join the user namespace that owns the sandbox's network
    // namespace (net_bridge.ts). bwrap moves the sandbox into a nested one before it waits on --block-fd
    // when the sandbox's uid differs from the namespace's (0) or for --disable-userns: with a host list the
    // command runs as uid 0 of that namespace (as it does when Hermes is root), without --disable-userns.
    ...(bridge && Deno.uid() !== 0
      ? ["--uid", "0", "--gid", "0"]
      : options.bwrap.disableUserns
      ? ["--disable-userns"]
      : []),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(resolved.net ? [] : ["--unshare-net"]),
    // The bridge is started in the new network namespace while bwrap waits (net_bridge.ts).
    ...(bridge ? ["--info-fd", "4", "--block-fd", "5"] : []),
    "--die-with-parent",
    "--new-session",
    "--seccomp",
    "3",
    ...baseMounts(resolved, policy.scratch_bytes ?? DEFAULT_SCRATCH_BYTES),
    ...(resolved.cwd_empty ? ["--dir", resolved.cwd] : []),
    ...resolved.mounts.flatMap((mount) => {
      switch (mount.kind) {
        case "read":
        case "protect":
          return ["--ro-bind", mount.path, mount.path];
        case "write":
          return ["--bind", mount.path, mount.path];
        case "hide_dir":
          return ["--tmpfs", mount.path];
        case "hide_file":
          return ["--ro-bind", "/dev/null", mount.path];
      }
    }),
    ...gitConfigMasks(resolved, policy, options.bwrap).flatMap((mask) => ["--ro-bind", mask.copy, mask.path]),
    // Read-only only now: grants below a hidden directory need their mount points created first.
    ...resolved.mounts.flatMap((mount) => mount.kind === "hide_dir" ? ["--remount-ro", mount.path] : []),
    // The root bwrap builds for `only_granted` is a tmpfs: writable until made read-only, last of all.
    ...(resolved.visible === "only_granted" ? ["--remount-ro", "/"] : []),
    "--chdir",
    resolved.cwd,
    "--",
    // bwrap always sets PWD; the environment is to be exactly the policy's.
    // Loader and shell start-up variables are set by `env` inside, not given to the launcher and bwrap.
    ...(policy.env.PWD === undefined || inside.length > 0
      ? [envProgram(), ...(policy.env.PWD === undefined ? ["-u", "PWD"] : []), "--", ...inside]
      : []),
    ...argv,
  ];
  const { launcher, seccomp } = options.bwrap;
  const [filter, kind] = resolved.unix_sockets
    ? [seccomp.host_network, "host_network" as const]
    : [seccomp.path, "isolated" as const];
  if (!filterIntact(filter, seccomp.arch, kind)) {
    throw new Error(`Cannot start the sandbox: its seccomp filter ${filter} was changed or removed`);
  }
  return {
    cmd: launcher.path,
    args: launchArgs(launcher, { path: options.bwrap.path, args }, {
      limits: resolved.limits,
      filter,
      cgroups: commandCgroups(options.bwrap.cgroups, resolved.limits),
      fifos: bridge?.fifos ?? null,
    }),
    env: { ...host, ...bridge?.env },
    clearEnv: true,
    cwd: resolved.cwd,
  };
}

/**
 * Variables that change how a program starts — the dynamic loader's, glibc's, bash's start-up and exported
 * functions — would act on the launcher shell and bwrap, which run on the host before any namespace exists:
 * they travel as `NAME=VALUE` arguments of `env` inside the sandbox instead (their values name files and
 * options, not secrets; everything else stays out of argv, which the host's /proc shows to every user).
 */
const STARTUP_ENV =
  /^(LD_|DYLD_|MALLOC_|BASH_FUNC_)|^(GCONV_PATH|GLIBC_TUNABLES|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4)$/;

function splitStartupEnv(
  env: Readonly<Record<string, string>>,
): { host: Record<string, string>; inside: string[] } {
  const host: Record<string, string> = {};
  const inside: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (STARTUP_ENV.test(name)) inside.push(`${name}=${value}`);
    else host[name] = value;
  }
  return { host, inside };
}

function baseMounts(policy: ResolvedPolicy, scratchBytes: number): string[] {
  // /tmp and /var/tmp get the scratch size; /run and /dev/shm hold sockets, pids and small segments.
  const scratch = (dir: string) => {
    const bytes = dir === "/tmp" || dir === "/var/tmp"
      ? scratchBytes
      : Math.min(scratchBytes, SMALL_SCRATCH_BYTES);
    return ["--size", String(bytes), "--tmpfs", dir];
  };
  const args: string[] = [];
  if (policy.visible === "all") {
    args.push("--ro-bind", "/", "/");
  } else {
    for (const dir of SYSTEM_DIRS) {
      const info = lstat(dir);
      if (info?.isSymlink) args.push("--symlink", Deno.readLinkSync(dir), dir);
      else if (info?.isDirectory) args.push("--ro-bind", dir, dir);
    }
    // TLS through the proxy needs the CA files as much as the host's network does.
    for (const name of [...ETC_EXEC, ...(policy.net || policy.hosts ? ETC_NET : [])]) {
      args.push("--ro-bind-try", `/etc/${name}`, `/etc/${name}`);
    }
  }
  args.push("--dev", "/dev", "--proc", "/proc");
  // bwrap's /dev is a writable tmpfs: only /dev/shm stays writable (bounded like /tmp when asked); device
  // nodes can still be written on a read-only mount.
  args.push(...scratch("/dev/shm"));
  args.push("--remount-ro", "/dev");
  for (const path of PROC_READ_ONLY) args.push("--ro-bind-try", path, path);
  args.push(...scratch("/tmp"));
  if (policy.visible === "all") {
    for (const dir of PRIVATE_DIRS) if (dir !== "/tmp" && lstat(dir)?.isDirectory) args.push(...scratch(dir));
    // A resolv.conf that links into /run (systemd-resolved, resolvconf) must survive the private /run.
    const resolv = policy.net ? realPathOrNull("/etc/resolv.conf") : null;
    if (resolv && PRIVATE_DIRS.some((dir) => resolv.startsWith(`${dir}/`))) {
      args.push("--ro-bind", resolv, resolv);
    }
  }
  return args;
}

/**
 * Repository configs visible inside that hold credentials (a CI checkout's extraheader token, a
 * credential section, a URL with a password), and the policy's `git_configs` (the global config's
 * `insteadOf` URLs with a token), each covered by a copy without them — unless the policy grants that config
 * file itself. Copies live beside the seccomp filter, in Hermes's private directory.
 */
function gitConfigMasks(
  resolved: ResolvedPolicy,
  policy: SandboxPolicy,
  bwrap: Bubblewrap,
): { path: string; copy: string }[] {
  const granted = new Set([...policy.read, ...policy.write].map((path) => realPathOrNull(path)));
  const dirs = [
    resolved.cwd,
    ...resolved.mounts.filter((m) => m.kind !== "hide_dir" && m.kind !== "hide_file").map((m) => m.path),
  ];
  const configs = new Set([
    ...dirs.map((dir) => enclosingRepo(dir)?.config).filter((path) => path !== undefined),
    ...(policy.git_configs ?? []).map((path) => realPathOrNull(path)).filter((path) => path !== null),
  ]);
  const masks: { path: string; copy: string }[] = [];
  for (const config of configs) {
    if (granted.has(config) || !visibleInside(config, resolved)) continue;
    let text: string;
    try {
      text = Deno.readTextFileSync(config);
    } catch {
      continue;
    }
    const clean = withoutCredentials(text);
    if (clean === null) continue;
    // Named by a hash of the content and checked byte for byte, so the name alone is never trusted.
    const copy = join(dirname(bwrap.seccomp.path), `gitconfig-${fnv1a(clean)}`);
    if (readTextOrNull(copy) !== clean) {
      const staging = `${copy}.${crypto.randomUUID()}`;
      Deno.writeTextFileSync(staging, clean, { mode: 0o444, createNew: true });
      Deno.renameSync(staging, copy);
    }
    masks.push({ path: config, copy });
  }
  return masks;
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `${hash.toString(16)}-${text.length}`;
}

function visibleInside(path: string, resolved: ResolvedPolicy): boolean {
  const inside = (root: string) => path === root || path.startsWith(`${root}/`);
  const mount = resolved.mounts.findLast((mount) => inside(mount.path));
  if (mount) return mount.kind === "read" || mount.kind === "write" || mount.kind === "protect";
  return resolved.visible === "all" && !PRIVATE_DIRS.some(inside);
}

/** coreutils' env, in the system directories every sandbox shows. */
function envProgram(): string {
  return lstat("/usr/bin/env")?.isFile || lstat("/usr/bin/env")?.isSymlink ? "/usr/bin/env" : "/bin/env";
}

function lstat(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}
