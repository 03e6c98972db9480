/**
 * How bwrap is started: through a host shell that sets the resource limits and opens the seccomp filter
 * on fd 3 (`--seccomp 3`), then `exec`s bwrap, so the process the caller holds is bwrap itself.
 * Deno cannot hand a child an extra file descriptor or set its rlimits; a shell's `ulimit` and `3<file`
 * can, for ~1 ms (bench/sandbox_bench.ts), and without shipping a helper binary.
 *
 * The filter is a file Hermes writes into a directory only its user can write (`$TMPDIR/hermes-<uid>`,
 * mode 0700, checked; else a fresh private temp directory), content-checked before each use: a file
 * another user could replace would be a filter they choose.
 */
import { join } from "../core/path.ts";
import type { ResourceLimits } from "./policy.ts";
import { hostNetworkFilter, type SeccompArch, unixSocketFilter } from "./seccomp.ts";

/** A POSIX shell whose `ulimit` units are known: dash (`-p` processes) or bash in POSIX mode (`-u`). */
export interface Launcher {
  path: string;
  /** Arguments before `-c` (`--posix` for bash: `ulimit -f` then counts 512-byte blocks, as dash's). */
  flags: string[];
  processes_flag: "-p" | "-u";
}

export function findLauncher(): Launcher | null {
  for (const path of ["/usr/bin/dash", "/bin/dash"]) {
    if (isFile(path)) return { path, flags: [], processes_flag: "-p" };
  }
  for (const path of ["/usr/bin/bash", "/bin/bash"]) {
    if (isFile(path)) return { path, flags: ["--posix"], processes_flag: "-u" };
  }
  return null;
}

/**
 * argv that runs `bwrap args…` with `limits` and, when `filter` is given, the filter on fd 3. The
 * numbers are the only variable text in the script; paths travel as arguments.
 */
export function launchArgs(
  launcher: Launcher,
  bwrap: { path: string; args: readonly string[] },
  options: {
    limits: ResourceLimits;
    filter: string | null;
    cgroups: readonly string[];
    /** FIFOs opened on fds 4 (bwrap's `--info-fd`) and 5 (`--block-fd`) for the network bridge. */
    fifos?: { info: string; block: string } | null;
  },
): string[] {
  const { limits } = options;
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024));
  const blocks = (bytes: number) => Math.max(1, Math.floor(bytes / 512));
  const processes = Math.max(1, Math.floor(limits.processes));
  // $1 is how many of the command's own cgroups follow (commandCgroups; 0 to 2): the launcher moves itself
  // into each, and bwrap, which it becomes, and everything bwrap starts stay there. Builtins only: no exec.
  const cgroups = `n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || ` +
    `{ echo "hermes: cannot join the sandbox's cgroup $1" >&2; exit 125; }; shift; n=$((n - 1)); done; `;
  // A limit that cannot be set stops the command: running it unbounded would be a silent downgrade.
  const fifos = options.fifos ? `fi=$1; fb=$2; shift 2; ` : "";
  const script = fifos + cgroups + [
    `ulimit ${launcher.processes_flag} ${processes}`,
    `ulimit -d ${kib(limits.memory)}`,
    `ulimit -f ${blocks(limits.file_size)}`,
  ].join(" && ") +
    ` || { echo "hermes: cannot set the sandbox's resource limits" >&2; exit 125; }; exec "$@"` +
    (options.filter === null ? "" : ` 3<"$0"`) +
    // The info FIFO first: Hermes opens it, then the block FIFO, in the same order.
    (options.fifos ? ` 4>"$fi" 5<"$fb"` : "");
  return [
    ...launcher.flags,
    "-c",
    script,
    options.filter ?? "hermes-sandbox",
    ...(options.fifos ? [options.fifos.info, options.fifos.block] : []),
    String(options.cgroups.length),
    ...options.cgroups,
    bwrap.path,
    ...bwrap.args,
  ];
}

/** Which filter: without the host's network (no AF_UNIX), or with it (`net: true`). */
export type FilterKind = "isolated" | "host_network";

const filterBytes = (arch: SeccompArch, kind: FilterKind) =>
  kind === "host_network" ? hostNetworkFilter(arch) : unixSocketFilter(arch);

/**
 * Writes the filter of `kind` for `arch` into a private directory below `tmp` and returns its path. Throws
 * when no private directory can be made.
 */
export function installFilter(arch: SeccompArch, tmp: string, kind: FilterKind = "isolated"): string {
  const bytes = filterBytes(arch, kind);
  const dir = privateDir(tmp);
  // Named by its content: Hermes versions with different filters share the directory, and each checks its own
  // file before every sandbox start (filterIntact).
  const path = join(dir, `seccomp-${arch}-${checksum(bytes)}.bpf`);
  if (!sameBytes(path, bytes)) {
    const staging = `${path}.${crypto.randomUUID()}`;
    Deno.writeFileSync(staging, bytes, { mode: 0o444, createNew: true });
    Deno.renameSync(staging, path);
  }
  return path;
}

/** True when the filter at `path` is the expected one (checked before each sandbox start). */
export function filterIntact(path: string, arch: SeccompArch, kind: FilterKind = "isolated"): boolean {
  return sameBytes(path, filterBytes(arch, kind));
}

function privateDir(tmp: string): string {
  const dir = join(tmp, `hermes-${Deno.uid() ?? "user"}`);
  try {
    Deno.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  const info = Deno.lstatSync(dir);
  if (info.isDirectory && info.uid === Deno.uid() && ((info.mode ?? 0o777) & 0o022) === 0) return dir;
  // Someone else made it (or made it writable to others): use a fresh one of our own.
  return Deno.makeTempDirSync({ dir: tmp, prefix: "hermes-" });
}

/** FNV-1a of the bytes, hex. */
function checksum(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

function sameBytes(path: string, bytes: Uint8Array): boolean {
  try {
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.uid !== Deno.uid() || info.size !== bytes.length) return false;
    const found = Deno.readFileSync(path);
    return found.every((byte, i) => byte === bytes[i]);
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
