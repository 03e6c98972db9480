/**
 * Opening a path inside a PathScope so that the object checked is the object used (a symlink
 * swapped into a path component between a realpath check and an open let calls escape their roots).
 *
 * On Linux the path is walked one component at a time from the root's real path (fixed at session start),
 * each step opened relative to the directory reached so far — `/proc/self/fd/<dir>/<name>`, which is
 * `openat(dir, name)` — with O_PATH | O_NOFOLLOW: nothing is ever followed, so every step stays below the
 * root whatever another process renames or swaps meanwhile. A symlink met on the way (legitimate, or
 * planted after the check) is not followed: the candidate is computed again from the real path (paths.ts),
 * checked against the roots, and walked again from its root, a bounded number of times. The final object is
 * inspected through its O_PATH descriptor before it is opened — a FIFO, socket or device is refused without
 * being opened (opening a FIFO blocks; opening a device can act) — and then reopened through
 * `/proc/self/fd/<n>`, which opens exactly that inode. For writing, a file with more than one hard link is
 * refused (another name of it may lie outside every root), new files are created with O_EXCL | O_NOFOLLOW,
 * and missing directories are created one level at a time with mkdirat semantics.
 *
 * Elsewhere (no /proc/self/fd) the fallback opens the resolved path with O_NOFOLLOW | O_NONBLOCK, then
 * checks that the opened file's device and inode are those at the path's real path, and that the real path
 * is still inside a root. Its residual window: a parent directory swapped for a symlink and back between
 * the open and the check.
 */
import fs from "node:fs";
import { dirname, join, resolve } from "../core/path.ts";
import { candidateInScope, type PathScope, realRootOf } from "./paths.ts";

const C = fs.constants;
/** Linux values (x86-64 and aarch64 share them); node does not export these two. */
const O_PATH = 0o10000000;
const O_CLOEXEC = 0o2000000;
/** Walks again after this many symlinks (or races) on the way; then the call fails. */
const MAX_HOPS = 16;

export type Intent = "read" | "write" | "list";

export type Opened =
  | {
    ok: true;
    fd: number;
    stat: fs.Stats;
    /** A path naming the opened object itself (`/proc/self/fd/<fd>` on Linux), e.g. to list a directory. */
    at: string;
  }
  | { ok: false; status: "denied" | "error"; reason: string };

/**
 * Opens `requested` (relative to the job directory) for `intent`: read → a regular file, O_RDONLY;
 * write → a regular file with one link (created when missing, with missing directories), O_WRONLY, not
 * truncated; list → a directory, O_RDONLY | O_DIRECTORY. The caller closes `fd`.
 */
export function openInScope(scope: PathScope, requested: string, intent: Intent): Opened {
  let absolute = resolve(scope.jobDir, requested);
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const candidate = candidateInScope(scope, absolute, requested);
    if (!candidate.ok) return { ok: false, status: "denied", reason: candidate.reason };
    const root = realRootOf(scope, candidate.path)!;
    const step = procFdWorks() ? walk(root, candidate.path, intent) : fallback(candidate.path, intent);
    if (step.kind === "opened") return checkLocation(scope, requested, step.fd, candidate.path);
    if (step.kind === "refused") {
      return { ok: false, status: "error", reason: step.reason.replace("%s", requested) };
    }
    // A symlink on the way, or the path changed under us: resolve again from where the walk stopped.
    absolute = step.path;
  }
  return {
    ok: false,
    status: "error",
    reason: `Cannot open "${requested}": it kept changing while being opened (symlinks swapped in a loop?)`,
  };
}

type Step =
  | { kind: "opened"; fd: number }
  | { kind: "again"; path: string }
  | { kind: "refused"; reason: string };

/** Walks `real` (inside `root`) from `/` without following anything; see the module doc. */
function walk(root: string, real: string, intent: Intent): Step {
  const names = real.split("/").filter(Boolean);
  const rootDepth = root.split("/").filter(Boolean).length;
  let dir = fs.openSync("/", O_PATH | O_CLOEXEC | C.O_DIRECTORY);
  let at = "";
  try {
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const here = `${at}/${name}`;
      const last = i === names.length - 1;
      const next = openStep(dir, name, intent === "write" && !last);
      if (next === null) return create(dir, name, here, intent);
      const stat = fs.fstatSync(next);
      if (stat.isSymbolicLink()) {
        fs.closeSync(next);
        if (i < rootDepth) {
          return { kind: "refused", reason: `Cannot open "%s": its root ${root} was replaced by a symlink` };
        }
        return { kind: "again", path: join(here, ...names.slice(i + 1)) };
      }
      fs.closeSync(dir);
      dir = next;
      at = here;
      if (!last && !stat.isDirectory()) {
        return { kind: "refused", reason: `Cannot open "%s": ${here} is not a directory` };
      }
    }
    return openFinal(dir, fs.fstatSync(dir), intent);
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * `openat(dir, name, O_PATH | O_NOFOLLOW)`; null when it is missing. With `mkdir`, a missing directory
 * is created first (mkdirat: an entry that appeared meanwhile is not followed, it is then inspected).
 */
function openStep(dir: number, name: string, mkdir: boolean): number | null {
  const path = `/proc/self/fd/${dir}/${name}`;
  try {
    return fs.openSync(path, O_PATH | O_CLOEXEC | C.O_NOFOLLOW);
  } catch (error) {
    if (code(error) !== "ENOENT") throw error;
    if (!mkdir) return null;
  }
  try {
    fs.mkdirSync(path);
  } catch (error) {
    if (code(error) !== "EEXIST") throw error;
  }
  return fs.openSync(path, O_PATH | O_CLOEXEC | C.O_NOFOLLOW);
}

/** Opens the object behind an O_PATH descriptor, after checking its type (and links, for writing). */
function openFinal(pathFd: number, stat: fs.Stats, intent: Intent): Step {
  const refused = refusal(stat, intent);
  if (refused) return { kind: "refused", reason: refused };
  // No O_NOFOLLOW here: the magic link is what must be followed, to exactly the inode inspected.
  const fd = fs.openSync(`/proc/self/fd/${pathFd}`, openFlags(intent) | O_CLOEXEC);
  const opened = fs.fstatSync(fd);
  const again = opened.dev !== stat.dev || opened.ino !== stat.ino ? "it changed while being opened" : null;
  const late = again ?? refusal(opened, intent);
  if (late) {
    fs.closeSync(fd);
    return { kind: "refused", reason: late.startsWith("Cannot") ? late : `Cannot open "%s": ${late}` };
  }
  return { kind: "opened", fd };
}

/** A new file in `dir`: O_EXCL | O_NOFOLLOW, so an entry that appeared meanwhile is never followed. */
function create(dir: number, name: string, path: string, intent: Intent): Step {
  if (intent !== "write") throw Object.assign(new Error(`${path} does not exist`), { code: "ENOENT" });
  try {
    const fd = fs.openSync(
      `/proc/self/fd/${dir}/${name}`,
      C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | O_CLOEXEC,
      0o666,
    );
    return { kind: "opened", fd };
  } catch (error) {
    if (code(error) === "EEXIST") return { kind: "again", path };
    throw error;
  }
}

/** Why `stat` may not be opened for `intent` (a message with `%s` for the requested path), or null. */
function refusal(stat: fs.Stats, intent: Intent): string | null {
  if (intent === "list") return stat.isDirectory() ? null : `Cannot list "%s": it is not a directory`;
  if (stat.isDirectory()) {
    return intent === "read"
      ? `Cannot read "%s": it is a directory; use list_dir`
      : `Cannot write "%s": it is a directory`;
  }
  if (!stat.isFile()) {
    return `Cannot ${intent} "%s": it is a ${kindOf(stat)}, and only regular files are ${
      intent === "read" ? "read" : "written"
    }`;
  }
  if (intent === "write" && stat.nlink > 1) {
    return `Cannot write "%s": it has ${stat.nlink} hard links, and another name of it may lie outside ` +
      "every root (remove the other links, or write a new file)";
  }
  return null;
}

function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return "FIFO (named pipe)";
  if (stat.isSocket()) return "socket";
  if (stat.isCharacterDevice()) return "character device";
  if (stat.isBlockDevice()) return "block device";
  return "special file";
}

/** Belt and braces: where the opened object is now must be inside a root. */
function checkLocation(scope: PathScope, requested: string, fd: number, real: string): Opened {
  const stat = fs.fstatSync(fd);
  if (!procFdWorks()) return { ok: true, fd, stat, at: real };
  if (realRootOf(scope, Deno.readLinkSync(`/proc/self/fd/${fd}`)) === null) {
    fs.closeSync(fd);
    return { ok: false, status: "denied", reason: `"${requested}" is outside tools.${scope.tool}.paths` };
  }
  return { ok: true, fd, stat, at: `/proc/self/fd/${fd}` };
}

/** Without /proc/self/fd: open with O_NOFOLLOW, then verify the identity against the real path. */
function fallback(real: string, intent: Intent): Step {
  let before: fs.Stats;
  try {
    before = fs.lstatSync(real);
  } catch (error) {
    if (intent === "write" && code(error) === "ENOENT") {
      fs.mkdirSync(dirname(real), { recursive: true });
      try {
        return {
          kind: "opened",
          fd: fs.openSync(real, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o666),
        };
      } catch (created) {
        if (code(created) === "EEXIST") return { kind: "again", path: real };
        throw created;
      }
    }
    throw error;
  }
  if (before.isSymbolicLink()) return { kind: "again", path: real };
  const refused = refusal(before, intent);
  if (refused) return { kind: "refused", reason: refused };
  const fd = fs.openSync(real, openFlags(intent) | C.O_NOFOLLOW);
  const opened = fs.fstatSync(fd);
  let now: fs.Stats | null = null;
  try {
    now = Deno.realPathSync(real) === real ? fs.statSync(real) : null;
  } catch {
    now = null;
  }
  if (!now || now.dev !== opened.dev || now.ino !== opened.ino || refusal(opened, intent)) {
    fs.closeSync(fd);
    return { kind: "again", path: real };
  }
  return { kind: "opened", fd };
}

/** O_NONBLOCK: should a FIFO get there after all, opening it does not wait for a writer. */
function openFlags(intent: Intent): number {
  if (intent === "list") return C.O_RDONLY | C.O_DIRECTORY;
  return (intent === "write" ? C.O_WRONLY : C.O_RDONLY) | C.O_NONBLOCK;
}

function procFdWorks(): boolean {
  return Deno.build.os === "linux";
}

function code(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}
