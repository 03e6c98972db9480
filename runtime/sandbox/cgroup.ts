/**
 * Where a sandboxed command can get its own pids cgroup: a directory of this process's cgroup that has
 * the pids controller (cgroup v2 with `pids` in its subtree_control, or the v1 pids hierarchy) and that
 * this user may create children in. The launcher makes `hermes-<pid>` there, sets `pids.max` and moves
 * itself in before it `exec`s bwrap. A cgroup is the cap that holds for uid 0, which RLIMIT_NPROC never
 * binds (the kernel exempts the root user whatever the namespace), and for every uid it counts only the
 * command's own processes. Null where no such directory exists: rlimits only.
 */

export interface PidsCgroup {
  /** The directory the per-command cgroups are made in. */
  parent: string;
  version: 1 | 2;
}

export function findPidsCgroup(): PidsCgroup | null {
  const cgroups = readOrNull("/proc/self/cgroup");
  const mounts = readOrNull("/proc/self/mountinfo");
  if (cgroups === null || mounts === null) return null;
  const candidates: PidsCgroup[] = [];
  for (const line of cgroups.trim().split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers === "") {
      const dir = mountedAt(mounts, "cgroup2", null, path);
      if (dir && (readOrNull(`${dir}/cgroup.subtree_control`) ?? "").split(/\s+/).includes("pids")) {
        candidates.push({ parent: dir, version: 2 });
      }
    } else if (controllers!.split(",").includes("pids")) {
      const dir = mountedAt(mounts, "cgroup", "pids", path);
      if (dir) candidates.push({ parent: dir, version: 1 });
    }
  }
  return candidates.find((candidate) => canCreateChild(candidate.parent)) ?? null;
}

/** The host directory of cgroup `path` in the hierarchy mounted with `fstype` (and `option`, for v1). */
function mountedAt(mountinfo: string, fstype: string, option: string | null, path: string): string | null {
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (right === undefined) continue;
    const fields = left!.split(" ");
    const [type, , options] = right.split(" ");
    if (type !== fstype || (option !== null && !(options ?? "").split(",").includes(option))) continue;
    const [root, point] = [fields[3]!, fields[4]!];
    if (root === "/") return path === "/" ? point : `${point}${path}`;
    if (path === root || path.startsWith(`${root}/`)) return `${point}${path.slice(root.length)}`;
  }
  return null;
}

function canCreateChild(parent: string): boolean {
  const probe = `${parent}/hermes-probe-${Deno.pid}`;
  try {
    Deno.mkdirSync(probe);
    Deno.removeSync(probe);
    return true;
  } catch {
    return false;
  }
}

function readOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}
