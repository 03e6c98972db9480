/**
 * Where a sandboxed command can get cgroups of its own: directories of this process's cgroups that have
 * the pids or memory controller (cgroup v2 with it in the directory's subtree_control, or the v1 hierarchy
 * of that controller) and that this user may create children in. Each command gets `hermes.<ms>.<random>`
 * there with its `pids.max` and memory cap (`commandCgroups`); the launcher moves itself into each before it
 * `exec`s bwrap, so the whole sandboxed tree is held. A pids cgroup is the process cap that holds for uid 0,
 * which RLIMIT_NPROC never binds; a memory cgroup caps the tree's memory, which RLIMIT_DATA (the fallback)
 * only caps per process. Null where no such directory exists: rlimits only.
 */

import { readTextOrNull } from "../core/fs.ts";
import type { ResourceLimits } from "./policy.ts";

export type CgroupController = "pids" | "memory";

export interface ControllerCgroup {
  /** The directory the per-command cgroups are made in. */
  parent: string;
  version: 1 | 2;
  /** Memory: whether the kernel accounts swap here, so the cap holds memory and swap together. */
  swap?: boolean;
}

/** The cgroups each command gets, by controller (the same directory for both on cgroup v2 when it can). */
export interface Cgroups {
  pids: ControllerCgroup | null;
  memory: ControllerCgroup | null;
}

/**
 * The cgroups worth joining for this user. Memory: wherever one is writable (nothing else caps the tree).
 * Pids: as root, where RLIMIT_NPROC does not bind; for another user only in the memory cgroup's own v2
 * directory, where it costs no extra join (the rlimit, which costs nothing, caps that user already).
 */
export function findCgroups(root: boolean): Cgroups {
  const cgroups = readTextOrNull("/proc/self/cgroup");
  const mounts = readTextOrNull("/proc/self/mountinfo");
  if (cgroups === null || mounts === null) return { pids: null, memory: null };
  const writable = (controller: CgroupController) =>
    cgroupCandidates(controller, cgroups, mounts, readTextOrNull).flatMap((c) => {
      const files = childFiles(c.parent);
      if (files === null) return [];
      if (controller === "pids") return [c];
      return [{
        ...c,
        swap: files.includes(c.version === 2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes"),
      }];
    });
  const memory = writable("memory")[0] ?? null;
  const pids =
    writable("pids").find((c) =>
      root || (c.version === 2 && memory?.version === 2 && c.parent === memory.parent)
    ) ?? null;
  return { pids, memory };
}

/**
 * The directories of this process's cgroups that have `controller`, from /proc/self/cgroup and
 * /proc/self/mountinfo: v2 where it is in the cgroup's subtree_control, v1 in that controller's hierarchy.
 */
export function cgroupCandidates(
  controller: CgroupController,
  cgroups: string,
  mountinfo: string,
  read: (path: string) => string | null,
): ControllerCgroup[] {
  const candidates: ControllerCgroup[] = [];
  for (const line of cgroups.trim().split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers === "") {
      const dir = mountedAt(mountinfo, "cgroup2", null, path);
      if (dir && (read(`${dir}/cgroup.subtree_control`) ?? "").split(/\s+/).includes(controller)) {
        candidates.push({ parent: dir, version: 2 });
      }
    } else if (controllers!.split(",").includes(controller)) {
      const dir = mountedAt(mountinfo, "cgroup", controller, path);
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

/** The files the kernel gives a new child of `parent`, or null when this user cannot make one. */
function childFiles(parent: string): string[] | null {
  const probe = `${parent}/hermes.probe.${Deno.pid}`;
  try {
    Deno.mkdirSync(probe);
  } catch {
    return null;
  }
  try {
    return [...Deno.readDirSync(probe)].map((entry) => entry.name);
  } catch {
    return null;
  } finally {
    Deno.removeSync(probe);
  }
}

/** Empty per-command cgroups older than this are removed; younger ones may be about to be joined. */
const STALE_MS = 30_000;

/**
 * Fresh cgroups holding one command to `limits`, for its launcher to join (`echo $$ > cgroup.procs` in each):
 * one directory where both controllers share a v2 parent, else one per controller. Made here rather than by
 * the launcher: dash has no builtin mkdir, and an exec per command would cost more than the cgroup. Finished
 * ones are removed on later calls (rmdir refuses a cgroup that still holds a process, so a running command
 * keeps its own).
 */
export function commandCgroups(
  found: Cgroups,
  limits: Pick<ResourceLimits, "processes" | "memory">,
  now = Date.now(),
): string[] {
  const byParent = new Map<string, { version: 1 | 2; controllers: CgroupController[] }>();
  for (const controller of ["pids", "memory"] as const) {
    const cgroup = found[controller];
    if (!cgroup) continue;
    const entry = byParent.get(cgroup.parent) ?? { version: cgroup.version, controllers: [] };
    entry.controllers.push(controller);
    byParent.set(cgroup.parent, entry);
  }
  const dirs: string[] = [];
  for (const [parent, { version, controllers }] of byParent) {
    removeStale(parent, now);
    const dir = `${parent}/hermes.${now}.${crypto.randomUUID().slice(0, 8)}`;
    Deno.mkdirSync(dir);
    for (const controller of controllers) {
      if (controller === "pids") {
        Deno.writeTextFileSync(`${dir}/pids.max`, String(Math.max(1, Math.floor(limits.processes))));
      } else setMemory(dir, version, Math.max(1024 ** 2, Math.floor(limits.memory)));
    }
    dirs.push(dir);
  }
  return dirs;
}

/**
 * The cap counts memory and swap together: swap is refused on v2 (`memory.swap.max` 0) and v1's
 * memory+swap cap equals the memory cap, where the kernel accounts swap at all (the file exists).
 */
function setMemory(dir: string, version: 1 | 2, bytes: number): void {
  const [memory, swap, swapValue] = version === 2
    ? ["memory.max", "memory.swap.max", "0"]
    : ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes", String(bytes)];
  // v1 refuses a memory cap above the memory+swap cap: the memory cap first, while the other is unlimited.
  Deno.writeTextFileSync(`${dir}/${memory}`, String(bytes));
  try {
    Deno.writeTextFileSync(`${dir}/${swap}`, swapValue, { create: false });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

function removeStale(parent: string, now: number): void {
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
}
