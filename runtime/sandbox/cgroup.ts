/**
 * Where a sandboxed command can get its own pids cgroup: a directory of this process's cgroup that has
 * the pids controller (cgroup v2 with `pids` in its subtree_control, or the v1 pids hierarchy) and that
 * this user may create children in. Each command gets `hermes.<ms>.<random>` there with its `pids.max`
 * (`commandCgroup`); the launcher moves itself in before it `exec`s bwrap. A cgroup is the cap that holds for uid 0, which RLIMIT_NPROC never
 * binds (the kernel exempts the root user whatever the namespace), and for every uid it counts only the
 * command's own processes. Null where no such directory exists: rlimits only.
 */

import { readTextOrNull } from "../core/fs.ts";

export interface PidsCgroup {
  /** The directory the per-command cgroups are made in. */
  parent: string;
  version: 1 | 2;
}

export function findPidsCgroup(): PidsCgroup | null {
  const cgroups = readTextOrNull("/proc/self/cgroup");
  const mounts = readTextOrNull("/proc/self/mountinfo");
  if (cgroups === null || mounts === null) return null;
  return pidsCgroupCandidates(cgroups, mounts, readTextOrNull).find((c) => canCreateChild(c.parent)) ?? null;
}

/**
 * The directories of this process's cgroups that have the pids controller, from /proc/self/cgroup and
 * /proc/self/mountinfo: v2 where `pids` is in the cgroup's subtree_control, v1 in the pids hierarchy.
 */
export function pidsCgroupCandidates(
  cgroups: string,
  mountinfo: string,
  read: (path: string) => string | null,
): PidsCgroup[] {
  const candidates: PidsCgroup[] = [];
  for (const line of cgroups.trim().split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers === "") {
      const dir = mountedAt(mountinfo, "cgroup2", null, path);
      if (dir && (read(`${dir}/cgroup.subtree_control`) ?? "").split(/\s+/).includes("pids")) {
        candidates.push({ parent: dir, version: 2 });
      }
    } else if (controllers!.split(",").includes("pids")) {
      const dir = mountedAt(mountinfo, "cgroup", "pids", path);
      if (dir) candidates.push({ parent: dir, version: 1 });
    }
  }
  return candidates;
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
  const probe = `${parent}/hermes.probe.${Deno.pid}`;
  try {
    Deno.mkdirSync(probe);
    Deno.removeSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** Empty per-command cgroups older than this are removed; younger ones may be about to be joined. */
const STALE_MS = 30_000;

/**
 * A fresh cgroup below `parent` holding at most `processes` tasks, for one command's launcher to join
 * (`echo $$ > cgroup.procs`). Made here rather than by the launcher: dash has no builtin mkdir, and an
 * exec per command would cost more than the cgroup. Finished ones are removed on later calls (rmdir
 * refuses a cgroup that still holds a process, so a running command keeps its own).
 */
export function commandCgroup(parent: string, processes: number, now = Date.now()): string {
  for (const entry of Deno.readDirSync(parent)) {
    // hermes.<created ms>.<random>: the creation time is in the name (cgroupfs reports no birth time).
    const born = /^hermes\.(\d+)\./.exec(entry.name)?.[1];
    if (!entry.isDirectory || born === undefined || now - Number(born) < STALE_MS) continue;
    try {
      Deno.removeSync(`${parent}/${entry.name}`);
    } catch {
      // still in use, or removed by another process meanwhile
    }
  }
  const dir = `${parent}/hermes.${now}.${crypto.randomUUID().slice(0, 8)}`;
  Deno.mkdirSync(dir);
  Deno.writeTextFileSync(`${dir}/pids.max`, String(Math.max(1, Math.floor(processes))));
  return dir;
}
