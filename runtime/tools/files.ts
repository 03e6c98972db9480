/**
 * `read_file {path}`, `write_file {path, content}` and `list_dir {path}`, each confined to its roots
 * (paths.ts) and reached without following symlinks (scoped_open.ts), so a path swapped between the check
 * and the use cannot lead out of a root. Only regular files are read or written (a FIFO, socket or device
 * is refused without being opened); a file with more than one hard link is not written. Reads are capped
 * at `max_bytes` (default 256KiB), writes refuse content over `max_bytes` (default 1MiB) and create missing
 * parent directories inside the root, listings are capped at `max_entries` (default 1000). Every call is
 * synchronous file-system work on regular files only, so nothing in it can block past the call's signal.
 */
import { insideGit, isProtected, type ProtectedPaths, protectsTarget } from "../core/protected_paths.ts";
import type NodeFs from "node:fs";
import { dirname, resolve } from "../core/path.ts";
import {
  ALLOWED,
  type CallNeeds,
  denied,
  type RuleVerdict,
  type Tool,
  type ToolContext,
  type ToolOutcome,
  type ToolScope,
} from "./tool.ts";
import { candidateInScope, type PathScope, pathScope, realPathOf } from "./paths.ts";
import type { Intent, Opened } from "./scoped_open.ts";

export function readFileTool(scope: PathScope, options: { maxBytes: number }): Tool {
  return {
    spec: {
      name: "read_file",
      description: "Read a text file. Relative paths are resolved against the job directory.",
      parameters: objectSchema({ path: "Path of the file to read" }),
    },
    needs: (args) => needsOf(scope, checkPath(scope, args.path, "file")),
    run: async (args, context, granted) => {
      // Loaded with the first read, like node:fs (withFile): a session's first request needs neither.
      const { CappedBytes } = await import("./_capped.ts");
      return await withFile(granted, args, context, "read", ({ fd, stat }, requested, fs) => {
        const content = new CappedBytes(options.maxBytes);
        const buffer = new Uint8Array(64 * 1024);
        for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer)) {
          if (content.push(buffer.slice(0, n))) break;
        }
        if (content.bytes.subarray(0, 8192).includes(0)) {
          return { status: "ok", content: `"${requested}" is a binary file (${stat.size} bytes); not shown` };
        }
        const text = new TextDecoder().decode(content.bytes);
        if (!content.truncated) return { status: "ok", content: text };
        return {
          status: "ok",
          content: `${text}\n[file truncated at ${options.maxBytes} bytes of ${stat.size}]`,
        };
      });
    },
  };
}

export function writeFileTool(
  scope: PathScope,
  options: { maxBytes: number; protect?: ProtectedPaths },
): Tool {
  const { protect } = options;
  return {
    spec: {
      name: "write_file",
      description: "Write a text file, replacing it if it exists and creating missing directories.",
      parameters: objectSchema({ path: "Path of the file to write", content: "The complete new content" }),
    },
    needs: (args) =>
      needsOf(
        scope,
        typeof args.path === "string" && insideGit(args.path)
          ? { allowed: false, reason: GIT_DIR(args.path), rule: null }
          : typeof args.path === "string" && protect &&
              protectsTarget(resolve(scope.jobDir, args.path), protect)
          ? { allowed: false, reason: PROTECTED(args.path), rule: null }
          : checkPath(scope, args.path, "file"),
      ),
    run: (args, context, granted) => {
      if (typeof args.content !== "string") {
        return Promise.resolve(error(`invalid arguments for write_file: "content" must be a string`));
      }
      const bytes = new TextEncoder().encode(args.content);
      if (bytes.length > options.maxBytes && typeof args.path === "string") {
        return Promise.resolve(error(
          `Cannot write "${args.path}" as the content is ${bytes.length} bytes: tools.write_file.max_bytes is ${options.maxBytes}`,
        ));
      }
      if (typeof args.path === "string" && insideGit(args.path)) {
        return Promise.resolve(denied(GIT_DIR(args.path)));
      }
      if (
        typeof args.path === "string" && protect && protectsTarget(resolve(scope.jobDir, args.path), protect)
      ) {
        return Promise.resolve(denied(PROTECTED(args.path)));
      }
      return withFile(granted, args, context, "write", ({ fd }, requested, fs) => {
        // The file actually opened, in case a symlink inside the root led into a .git directory or to a
        // protected file (checked before anything is truncated or written).
        const opened = openedPath(fd) ?? "";
        if (insideGit(opened)) return denied(GIT_DIR(requested));
        if (protect && isProtected(opened, protect)) return denied(PROTECTED(requested));
        fs.ftruncateSync(fd, 0);
        for (let written = 0; written < bytes.length;) {
          written += fs.writeSync(fd, bytes, written, bytes.length - written);
        }
        return { status: "ok", content: `wrote ${bytes.length} bytes to ${requested}` };
      });
    },
  };
}

export function listDirTool(scope: PathScope, options: { maxEntries: number }): Tool {
  return {
    spec: {
      name: "list_dir",
      description: "List a directory: one entry per line, sorted, directories end with '/'.",
      parameters: objectSchema({ path: "Path of the directory to list" }),
    },
    needs: (args) => needsOf(scope, checkPath(scope, args.path, "directory")),
    run: (args, context, granted) =>
      withFile(granted, args, context, "list", (opened, requested) => {
        const names: string[] = [];
        // `opened.at` names the directory the descriptor holds, whatever its path has become since.
        for (const entry of Deno.readDirSync(opened.at)) {
          const directory = entry.isDirectory ||
            (entry.isSymlink && isDirectory(`${opened.at}/${entry.name}`));
          names.push(entry.name + (directory ? "/" : ""));
        }
        if (names.length === 0) return { status: "ok", content: `(${requested} is empty)` };
        names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const shown = names.slice(0, options.maxEntries);
        const more = names.length - shown.length;
        return {
          status: "ok",
          content: shown.join("\n") + (more > 0 ? `\n[${more} more entries not shown]` : ""),
        };
      }),
  };
}

/**
 * Whether `path` is inside the tool's roots, before the call runs. Outside them an approver may allow the call
 * (the rule to add names the directory); a path that no root could hold (a dangling symlink) may not.
 */
function checkPath(scope: PathScope, path: unknown, kind: "file" | "directory"): RuleVerdict {
  if (typeof path !== "string" || path === "") return ALLOWED;
  try {
    return checkResolved(scope, path, kind);
  } catch (cause) {
    // A path no file system can hold (a name over 255 bytes, a loop of symlinks): nobody is asked.
    const why = cause instanceof Error ? cause.message : String(cause);
    return { allowed: false, reason: `Cannot resolve "${path}": ${why}`, rule: null };
  }
}

function checkResolved(scope: PathScope, path: string, kind: "file" | "directory"): RuleVerdict {
  const absolute = resolve(scope.jobDir, path);
  const inside = candidateInScope(scope, absolute, path);
  if (inside.ok) return ALLOWED;
  const anywhere = candidateInScope(everywhere(scope), absolute, path);
  if (!anywhere.ok) return { allowed: false, reason: inside.reason, rule: null };
  const root = kind === "file" ? dirname(absolute) : absolute;
  // The approver sees where the path leads now (symlinks resolved), and approves that object alone.
  return {
    allowed: false,
    reason: inside.reason,
    rule: `tools.${scope.tool}.paths: ["${root}"]`,
    subject: anywhere.path,
  };
}

/**
 * The verdict on a call and the scope it runs in: the tool's roots, or outside them (when an approver may be
 * asked) the one object the approver is shown — its real path the only root, walked without following
 * symlinks by scoped_open.ts, and pinned, so a symlink planted after the approval (in place of the file or
 * of a directory above it) is not followed. A call nobody may allow gets no roots at all.
 */
function needsOf(scope: PathScope, verdict: RuleVerdict): CallNeeds {
  if (verdict.allowed) return { verdict, scope: { files: { roots: scope } } };
  if (verdict.rule === null || verdict.subject === undefined) {
    return { verdict, scope: { files: { roots: { ...scope, roots: [], realRoots: [] } } } };
  }
  const roots = { tool: scope.tool, jobDir: scope.jobDir, roots: ["/"], realRoots: [verdict.subject] };
  return { verdict, scope: { files: { roots, pinned: verdict.subject } } };
}

/** Why a pinned call may not run: its path now leads elsewhere than the object it was granted. */
function moved(jobDir: string, requested: string, pinned: string | undefined): string | null {
  if (pinned === undefined) return null;
  const now = realPathOf(resolve(jobDir, requested));
  if (now === pinned) return null;
  return `"${requested}" now leads to ${now ?? "a missing target"}, not to ${pinned} the approver allowed`;
}

function everywhere(scope: PathScope): PathScope {
  return pathScope(scope.tool, scope.jobDir, ["/"]);
}

/**
 * Validates the path, opens it within the granted scope for `intent`, runs `act` on the descriptor and
 * closes it. A call granted no file scope does not run.
 */
async function withFile(
  granted: ToolScope,
  args: Record<string, unknown>,
  context: ToolContext,
  intent: Intent,
  act: (opened: Opened & { ok: true }, requested: string, fs: typeof NodeFs) => ToolOutcome,
): Promise<ToolOutcome> {
  if (granted.files === undefined) return denied("the call was granted no file scope");
  const { roots: scope, pinned } = granted.files;
  const requested = args.path;
  if (typeof requested !== "string" || requested === "") {
    return error(`invalid arguments for ${scope.tool}: "path" must be a non-empty string`);
  }
  if (context.signal.aborted) return error("cancelled");
  // node:fs boots Deno's Node layer (~10 ms): it loads with the first file call, not with every session.
  const [{ default: fs }, { openInScope }] = await Promise.all([
    import("node:fs"),
    import("./scoped_open.ts"),
  ]);
  try {
    const elsewhere = moved(scope.jobDir, requested, pinned);
    if (elsewhere !== null) return denied(elsewhere);
    const opened = openInScope(scope, requested, intent);
    if (!opened.ok) {
      return Promise.resolve(opened.status === "denied" ? denied(opened.reason) : error(opened.reason));
    }
    try {
      return Promise.resolve(act(opened, requested, fs));
    } finally {
      fs.closeSync(opened.fd);
    }
  } catch (cause) {
    const code = (cause as { code?: string } | null)?.code;
    if (code === "ENOENT" || cause instanceof Deno.errors.NotFound) {
      return Promise.resolve(error(`"${requested}" does not exist`));
    }
    if (code === "ENOTDIR" || cause instanceof Deno.errors.NotADirectory) {
      return Promise.resolve(error(`"${requested}" does not exist (a parent is not a directory)`));
    }
    return Promise.resolve(error(
      `${scope.tool} "${requested}" failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    ));
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function objectSchema(properties: Record<string, string>): Record<string, unknown> {
  return {
    type: "object",
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, description]) => [name, { type: "string", description }]),
    ),
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

/** A protected job (`--untrusted`, a policy's protect_job) may not write these, whatever its paths grant. */
const PROTECTED = (path: string) =>
  `write_file does not write "${path}": a protected job's .git, job files and the files it loads or runs are read-only`;

/**
 * write_file does not write inside a `.git` directory (`insideGit`): its config and hooks name programs git
 * runs later (core.fsmonitor, filters, hooks), so planting one would let an allowed `git status` run anything.
 */
const GIT_DIR = (path: string) =>
  `write_file does not write inside a .git directory ("${path}"): its config and hooks run programs; use git commands`;

function openedPath(fd: number): string | null {
  try {
    return Deno.readLinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

function error(message: string): ToolOutcome {
  return { status: "error", content: `error: ${message}` };
}
