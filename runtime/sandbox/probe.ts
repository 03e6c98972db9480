/**
 * Whether the OS sandbox works on this machine: finds `bwrap`, reads its version, and runs `true` inside
 * a sandbox with every namespace the real calls use, so a failure shows up here (before any model call)
 * and not on the first tool call. A failure says why and how to fix it or opt out.
 */
import { type Bubblewrap, wrapCommand } from "./sandbox.ts";
import { findLauncher, installFilter } from "./launcher.ts";
import { seccompArch } from "./seccomp.ts";
import { findCgroups } from "./cgroup.ts";
import { type HostFacts, readHostFacts, sandboxBlocker } from "./blockers.ts";

export type SandboxProbe = ({ ok: true } & Bubblewrap) | { ok: false; reason: string; hint: string };

export interface ProbeOptions {
  /** Use exactly this bwrap (`HERMES_BWRAP`), else search `path` then /usr/bin, /bin, /usr/local/bin. */
  bwrap?: string;
  /** The PATH to search, as given by config loading (this module reads no environment). */
  path?: string;
  /** Where the seccomp filter file is kept (`$TMPDIR`, default /tmp). */
  tmp?: string;
  /** What the kernel and the container allow (read from /proc when absent; tests pass their own). */
  facts?: HostFacts;
}

const OPT_OUT = "or opt out explicitly with `sandbox: off` (a warning is printed and results are marked)";
const INSTALL = "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install " +
  `bubblewrap\`; Arch: \`pacman -S bubblewrap\`), ${OPT_OUT}`;

export async function probeSandbox(options: ProbeOptions = {}): Promise<SandboxProbe> {
  if (Deno.build.os !== "linux") {
    return {
      ok: false,
      reason: `the OS sandbox needs Linux (bubblewrap); this is ${Deno.build.os}`,
      hint: `run on Linux, ${OPT_OUT}`,
    };
  }
  const path = options.bwrap ?? findBwrap(options.path ?? "");
  if (path === null) return { ok: false, reason: "bubblewrap (bwrap) is not installed", hint: INSTALL };
  const version = await run(path, ["--version"]);
  if (version === null) return { ok: false, reason: `bubblewrap cannot be run at ${path}`, hint: INSTALL };
  const number = /(\d+\.\d+(?:\.\d+)?)/.exec(version.stdout)?.[1];
  if (version.code !== 0 || number === undefined) {
    return {
      ok: false,
      reason: `${path} --version failed: ${firstLine(version.stderr || version.stdout)}`,
      hint: INSTALL,
    };
  }
  const launcher = findLauncher();
  if (launcher === null) {
    return {
      ok: false,
      reason: "no dash or bash at /usr/bin or /bin to start bubblewrap with its limits and seccomp filter",
      hint: `install dash or bash, ${OPT_OUT}`,
    };
  }
  const arch = seccompArch();
  if (arch === null) {
    return {
      ok: false,
      reason:
        `the sandbox's seccomp filter (no host unix sockets) supports x86_64 and aarch64; this is ${Deno.build.arch}`,
      hint: `run on x86_64 or aarch64, ${OPT_OUT}`,
    };
  }
  let filter: string;
  let hostNetwork: string;
  try {
    filter = installFilter(arch, options.tmp ?? "/tmp");
    hostNetwork = installFilter(arch, options.tmp ?? "/tmp", "host_network");
  } catch (error) {
    return {
      ok: false,
      reason: `Cannot write the sandbox's seccomp filter below ${options.tmp ?? "/tmp"}: ${String(error)}`,
      hint: `set TMPDIR to a writable directory, ${OPT_OUT}`,
    };
  }
  const bwrap: Bubblewrap = {
    path,
    version: number,
    disableUserns: atLeast(number, [0, 8]),
    launcher,
    seccomp: { path: filter, host_network: hostNetwork, arch },
    // Joining a cgroup costs per command (bench/sandbox_bench.ts), an rlimit nothing: a pids cgroup only
    // where RLIMIT_NPROC does not bind (the root user, whatever the namespace); a memory cgroup wherever one
    // can be made, since RLIMIT_DATA holds each process, not the tree.
    cgroups: findCgroups(Deno.uid() === 0),
  };
  const wrapped = wrapCommand(["true"], { read: [], write: [], net: false, env: {}, cwd: "/" }, { bwrap });
  const smoke = await run(wrapped.cmd, wrapped.args);
  if (smoke?.code === 0) return { ok: true, ...bwrap };
  const error = firstLine(smoke?.stderr ?? "it could not be started");
  const blocker = sandboxBlocker(error, { ...(options.facts ?? readHostFacts()), bwrap: path });
  return {
    ok: false,
    reason: `bubblewrap ${number} cannot create a sandbox here: ${error}${
      blocker ? ` — ${blocker.cause}` : ""
    }`,
    hint: `${
      blocker?.fix ?? "check that bubblewrap works (`bwrap --ro-bind / / --unshare-all true`)"
    }, ${OPT_OUT}`,
  };
}

/** Where `probeSandbox` looks, from the process environment: HERMES_BWRAP, else PATH. */
export function probeOptions(env: Readonly<Record<string, string>>): ProbeOptions {
  return {
    ...(env.HERMES_BWRAP ? { bwrap: env.HERMES_BWRAP } : {}),
    path: env.PATH ?? "",
    ...(env.TMPDIR ? { tmp: env.TMPDIR } : {}),
  };
}

/** One probe shared by every user of a session (shell tool, plugins, MCP servers), run on first use. */
export function probeOnce(options: ProbeOptions): () => Promise<SandboxProbe> {
  let probing: Promise<SandboxProbe> | undefined;
  return () => probing ??= probeSandbox(options);
}

function findBwrap(path: string): string | null {
  for (const dir of [...path.split(":").filter(Boolean), "/usr/bin", "/bin", "/usr/local/bin"]) {
    try {
      if (Deno.statSync(`${dir}/bwrap`).isFile) return `${dir}/bwrap`;
    } catch {
      // not here
    }
  }
  return null;
}

async function run(
  cmd: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string } | null> {
  try {
    const out = await new Deno.Command(cmd, {
      args,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    const text = new TextDecoder();
    return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
  } catch {
    return null;
  }
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

function atLeast(version: string, wanted: readonly number[]): boolean {
  const parts = version.split(".").map(Number);
  for (let i = 0; i < wanted.length; i++) {
    const [have, want] = [parts[i] ?? 0, wanted[i]!];
    if (have !== want) return have > want;
  }
  return true;
}
