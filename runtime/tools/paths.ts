/**
 * Path roots of read_file, write_file and list_dir (`tools.<tool>.paths`, default: the job directory).
 *
 * A requested path resolves against the job directory and is allowed only when it lies inside a root
 * both as written (no `..` or absolute escape) and after resolving symlinks: the real path of the target
 * — or, for a path that does not exist yet, of its nearest existing ancestor — must be inside the real
 * path of a root. A dangling symlink is refused, since writing through it could create a file anywhere.
 * Tools then act on the checked real path.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { exists } from "../core/fs.ts";

export interface PathScope {
  /** Tool name, for messages (`tools.<tool>.paths`). */
  tool: string;
  jobDir: string;
  /** Absolute roots. */
  roots: string[];
}

export type ScopedPath = { ok: true; path: string } | { ok: false; reason: string };

export function pathScope(tool: string, jobDir: string, paths: readonly string[] | undefined): PathScope {
  const base = resolve(jobDir);
  return { tool, jobDir: base, roots: (paths ?? ["."]).map((p) => resolve(base, p)) };
}

/** Resolves `requested` inside the scope, or says why it is refused (text for `denied(…)`). */
export async function resolveInScope(scope: PathScope, requested: string): Promise<ScopedPath> {
  const outside: ScopedPath = { ok: false, reason: `"${requested}" is outside tools.${scope.tool}.paths` };
  const absolute = resolve(scope.jobDir, requested);
  if (!scope.roots.some((root) => isInside(absolute, root))) return outside;
  const real = await realPathOf(absolute);
  if (real === null) return { ok: false, reason: `"${requested}" is a symlink to a missing target` };
  for (const root of scope.roots) {
    const realRoot = await realPathOf(root);
    if (realRoot !== null && isInside(real, realRoot)) return { ok: true, path: real };
  }
  return outside;
}

export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || !(rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest; null at a dangling link. */
async function realPathOf(path: string): Promise<string | null> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(await Deno.realPath(current), ...missing.reverse());
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    if (await exists(current)) return null;
    const parent = dirname(current);
    if (parent === current) return null;
    missing.push(basename(current));
    current = parent;
  }
}
