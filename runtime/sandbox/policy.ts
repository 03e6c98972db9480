/**
 * What a sandboxed command may see and do, and its resolution into the real paths that get mounted.
 * Grants are resolved (symlinks followed) before anything is bound, so the sandbox binds what the path
 * names now, never a link a sandboxed command could have planted for the next call.
 */
import { dirname, isAbsolute, resolve } from "../core/path.ts";
import { ValidationError } from "../core/errors.ts";
import { parseSize } from "../core/duration.ts";
import { realPathOrNull } from "../core/fs.ts";

export interface SandboxPolicy {
  /** Host paths readable inside (absolute). A missing one is skipped: there is nothing to read. */
  read: readonly string[];
  /** Host paths writable inside (absolute, must exist). Everything else is read-only or absent. */
  write: readonly string[];
  /**
   * `all` (default): the host filesystem is visible read-only (the shell tool). `only_granted`: only
   * `read`, `write` and what a program needs to start (/usr, /bin, /lib*, /sbin, loader and TLS files
   * of /etc) exist (plugins, MCP servers).
   */
  visible?: "all" | "only_granted";
  /** Host paths shown empty inside (the store, ~/.ssh, …); a grant below a hidden path still shows. */
  hide?: readonly string[];
  /**
   * Git config files beyond the repositories' own (the user's global config, a CI runner's other checkouts)
   * shown, where visible, as copies without credentials; as they are when granted themselves.
   */
  git_configs?: readonly string[];
  /**
   * Host paths kept read-only even below a write root (a protected job's `.git` and own files): bound
   * read-only over the writable tree, so a command can neither change, remove nor replace them. Missing
   * ones are skipped; outside every write root they are read-only or absent anyway.
   */
  read_only?: readonly string[];
  /**
   * `false`: an empty network namespace (own loopback only). `true`: the host's network. A host list: the
   * empty namespace plus a bridge to the filtering proxy (net_bridge.ts), which the caller opens and hands
   * to wrapCommand.
   */
  net: boolean | readonly string[];
  /**
   * Bytes each private scratch filesystem (/tmp, /var/tmp, /run, /dev/shm) may hold; unbounded when absent.
   * Files there live in memory but in no process's resident set, so a memory cap must bound them too.
   */
  scratch_bytes?: number;
  /** Resource limits of every process inside (`DEFAULT_LIMITS` where absent). */
  limits?: Partial<ResourceLimits>;
  /** The whole environment of the command; nothing of the parent's is inherited. */
  env: Readonly<Record<string, string>>;
  /**
   * Working directory inside (absolute, must exist). Where only granted paths are visible, a cwd that is
   * not one of them is shown as an empty directory: relative paths keep meaning what they mean on the
   * host (`./notes` below it, when granted), and nothing else of it is seen.
   */
  cwd: string;
}

/**
 * What one sandboxed command may consume, held by rlimits set on bwrap before it starts (inherited by
 * everything inside) and, where the host lets Hermes make them, by cgroups the whole tree is in (cgroup.ts).
 * As a user other than root, RLIMIT_NPROC also counts that user's processes outside (docs/sandbox.md).
 */
export interface ResourceLimits {
  /** Processes and threads (a pids cgroup, else RLIMIT_NPROC): a fork bomb stops here. */
  processes: number;
  /**
   * Memory in bytes: of the whole tree in a memory cgroup (swap too, where the kernel accounts it); and of each process's writable
   * data (RLIMIT_DATA: heap and private mappings, not reservations), the only layer where no cgroup is.
   */
  memory: number;
  /** Largest file one process may write, in bytes (RLIMIT_FSIZE): in /tmp and in write roots alike. */
  file_size: number;
}

export const DEFAULT_LIMITS: ResourceLimits = {
  processes: 512,
  memory: 4 * 1024 ** 3,
  file_size: 1024 ** 3,
};

/** Bytes each of /tmp and /var/tmp may hold where the caller names no size; /run and /dev/shm hold less. */
export const DEFAULT_SCRATCH_BYTES = 512 * 1024 ** 2;
export const SMALL_SCRATCH_BYTES = 64 * 1024 ** 2;

export type MountKind = "read" | "write" | "protect" | "hide_dir" | "hide_file";

/** One bind (or cover) at a real host path, applied parents first so the deepest rule wins. */
export interface Mount {
  kind: MountKind;
  path: string;
}

export interface ResolvedPolicy {
  visible: "all" | "only_granted";
  mounts: Mount[];
  /** The host's whole network (`net: true`); else an own network namespace. */
  net: boolean;
  /** The host list the proxy enforces, or null (`net: true` or `false`). */
  hosts: readonly string[] | null;
  /** Unix sockets may be created: only with the host's whole network (`net: true`). */
  unix_sockets: boolean;
  limits: ResourceLimits;
  cwd: string;
  /** The cwd is not visible otherwise and is shown as an empty directory. */
  cwd_empty: boolean;
}

/** Directories bound read-only (or recreated as the same symlink) in `only_granted` mode. */
export const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] as const;

/**
 * Directories replaced by a private empty tmpfs in `all` mode: scratch space, and /run, whose sockets
 * (docker.sock, systemd's private socket, D-Bus, agents) would otherwise let a command talk its way out.
 */
export const PRIVATE_DIRS = ["/tmp", "/var/tmp", "/run", "/var/run"] as const;

const RANK: Record<MountKind, number> = { protect: 4, write: 3, read: 2, hide_dir: 1, hide_file: 1 };

/**
 * The host paths a command's arguments name (`./docs`, `/srv/data`, `server.js`: an argument that is not an
 * option and names an existing path, relative to `cwd`): a stdio MCP server's sandbox shows them, and a trust
 * policy judges them as read grants.
 */
export function argumentPaths(args: readonly string[], cwd: string): { index: number; path: string }[] {
  const found: { index: number; path: string }[] = [];
  args.forEach((arg, index) => {
    if (arg.startsWith("-") || arg.includes("=")) return;
    const path = resolve(cwd, arg);
    try {
      Deno.statSync(path);
      found.push({ index, path });
    } catch {
      // not a path, or not one that exists: nothing is shown
    }
  });
  return found;
}

export function resolvePolicy(policy: SandboxPolicy): ResolvedPolicy {
  const visible = policy.visible ?? "all";
  const writes = policy.write.map((path) => realGrant(path, "write"));
  const writeRoots = writes.filter((path): path is string => path !== null);
  const candidates: Mount[] = [
    ...writeRoots.map((path) => ({ kind: "write" as const, path })),
    ...policy.read.flatMap((path) => {
      const real = realGrant(path, "read");
      return real === null ? [] : [{ kind: "read" as const, path: real }];
    }),
    ...(policy.read_only ?? []).flatMap((path) => {
      const real = realPathOrNull(path);
      return real === null ? [] : [{ kind: "protect" as const, path: real }];
    }),
    ...(policy.hide ?? []).flatMap((path) => {
      const real = realGrant(path, "hide");
      if (real === null) return [];
      return [{
        kind: Deno.statSync(real).isDirectory ? "hide_dir" as const : "hide_file" as const,
        path: real,
      }];
    }),
  ];
  for (const path of [...policy.write, ...policy.read, ...(policy.hide ?? [])]) {
    refusePlantedLink(path, writeRoots);
  }
  const mounts = orderMounts(candidates, visible);
  return {
    visible,
    mounts,
    net: policy.net === true,
    hosts: Array.isArray(policy.net) ? policy.net : null,
    unix_sockets: policy.net === true,
    limits: { ...DEFAULT_LIMITS, ...policy.limits },
    ...realCwd(policy.cwd, visible, mounts),
  };
}

/** The real path of a grant, or null for a missing read/hide path; throws for what cannot be granted. */
function realGrant(path: string, what: "read" | "write" | "hide"): string | null {
  if (!isAbsolute(path)) {
    throw new ValidationError(`Cannot ${what} "${path}" in the sandbox: the path is relative`);
  }
  let real: string;
  try {
    real = Deno.realPathSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    if (what !== "write") return null;
    throw new ValidationError(`Cannot grant write access to "${path}" in the sandbox: it does not exist`);
  }
  if (real === "/") {
    throw new ValidationError(
      `Cannot ${what} "${path}" in the sandbox: it is the root directory (use visible: "all" to read ` +
        "everything, and grant write access to the directories that need it)",
    );
  }
  if (["/proc", "/dev"].some((system) => real === system || real.startsWith(`${system}/`))) {
    throw new ValidationError(`Cannot ${what} "${path}" in the sandbox: the sandbox has its own ${real}`);
  }
  return real;
}

/**
 * Refuses a path that passes through a symlink lying inside a write root: a sandboxed command may have
 * made it (`out -> ~/.ssh`) so that the next call binds the link's target.
 */
function refusePlantedLink(path: string, writeRoots: readonly string[]): void {
  const parts = resolve(path).split("/").filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const prefix = `/${parts.slice(0, i).join("/")}`;
    let isLink: boolean;
    try {
      isLink = Deno.lstatSync(prefix).isSymlink;
    } catch {
      return; // missing from here on: skipped or refused by realGrant
    }
    if (!isLink) continue;
    const location = `${Deno.realPathSync(dirname(prefix))}/${parts[i - 1]}`;
    const root = writeRoots.find((root) => location === root || location.startsWith(`${root}/`));
    if (root !== undefined) {
      throw new ValidationError(
        `Cannot grant "${path}" to the sandbox: it passes through the symlink "${prefix}" inside the write ` +
          `root "${root}", which a sandboxed command could have planted (name the real path instead)`,
      );
    }
  }
}

/** Parents first; one mount per path (write > read > hide); a grant already covered by its parent is dropped. */
function orderMounts(candidates: readonly Mount[], visible: "all" | "only_granted"): Mount[] {
  const byPath = new Map<string, Mount>();
  const writeRoots = candidates.filter((mount) => mount.kind === "write").map((mount) => mount.path);
  for (const mount of candidates) {
    const seen = byPath.get(mount.path);
    if (!seen || RANK[mount.kind] > RANK[seen.kind]) byPath.set(mount.path, mount);
  }
  const sorted = [...byPath.values()].sort((a, b) =>
    depth(a.path) - depth(b.path) || a.path.localeCompare(b.path)
  );
  const kept: Mount[] = [];
  for (const mount of sorted) {
    const parent = kept.findLast((outer) => mount.path.startsWith(`${outer.path}/`));
    // A read grant below a write root or a read grant adds nothing (and would make a writable tree read-only).
    if (mount.kind === "read" && (parent?.kind === "write" || parent?.kind === "read")) continue;
    // A protected path matters only where it would be writable: below a write root, being one or holding one.
    const writable = parent?.kind === "write" ||
      writeRoots.some((root) => root === mount.path || root.startsWith(`${mount.path}/`));
    if (mount.kind === "protect" && !writable) continue;
    // Below a protected path everything stays read-only: its read-only bind already shows it.
    if (parent?.kind === "protect") continue;
    // Where nothing is visible, there is nothing to hide.
    if (mount.kind !== "read" && mount.kind !== "write" && visible === "only_granted" && !parent) continue;
    kept.push(mount);
  }
  return kept;
}

function depth(path: string): number {
  return path.split("/").length;
}

function realCwd(
  cwd: string,
  visible: "all" | "only_granted",
  mounts: readonly Mount[],
): { cwd: string; cwd_empty: boolean } {
  if (!isAbsolute(cwd)) {
    throw new ValidationError(`Cannot run in "${cwd}" in the sandbox: the path is relative`);
  }
  let real: string;
  try {
    real = Deno.realPathSync(cwd);
    if (!Deno.statSync(real).isDirectory) throw new Deno.errors.NotADirectory();
  } catch {
    throw new ValidationError(`Cannot run in "${cwd}" in the sandbox: it is not a directory`);
  }
  const inside = (root: string) => real === root || real.startsWith(`${root}/`);
  const mount = mounts.findLast((mount) => inside(mount.path));
  const shown = { cwd: real, cwd_empty: false };
  if (mount?.kind === "read" || mount?.kind === "write" || mount?.kind === "protect") return shown;
  if (mount === undefined) {
    if (visible === "all" && !PRIVATE_DIRS.some(inside)) return shown;
    if (visible === "only_granted") {
      return SYSTEM_DIRS.some(inside) ? shown : { cwd: real, cwd_empty: true };
    }
  }
  throw new ValidationError(
    `Cannot run in "${cwd}" in the sandbox: it is not visible there (grant it with read or write)`,
  );
}

/** A job's `sandbox.limits` (sizes as written: `64MiB`) as the policy's `limits` and `scratch_bytes`. */
export function configuredLimits(
  config:
    | {
      processes?: number | undefined;
      memory?: string | number | undefined;
      file_size?: string | number | undefined;
      tmp?: string | number | undefined;
    }
    | undefined,
): Pick<SandboxPolicy, "limits" | "scratch_bytes"> {
  if (!config) return {};
  const limits: Partial<ResourceLimits> = {
    ...(config.processes !== undefined ? { processes: config.processes } : {}),
    ...(config.memory !== undefined ? { memory: parseSize(config.memory) } : {}),
    ...(config.file_size !== undefined ? { file_size: parseSize(config.file_size) } : {}),
  };
  return { limits, ...(config.tmp !== undefined ? { scratch_bytes: parseSize(config.tmp) } : {}) };
}
