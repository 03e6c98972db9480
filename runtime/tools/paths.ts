/**
 * Path roots of read_file, write_file and list_dir (`tools.<tool>.paths`, default: the job directory).
 *
 * A requested path resolves against the job directory and is allowed only when it lies inside a root
 * both as written (no `..` or absolute escape) and after resolving symlinks: the real path of the target
 * — or, for a path that does not exist yet, of its nearest existing ancestor — must be inside the real
 * path of a root. A dangling symlink is refused, since writing through it could create a file anywhere.
 *
 * The real path of each root is fixed when the scope is made (at session start, before any tool ran), so
 * a symlink planted later in place of a root does not move it. This module only computes the candidate
 * path; scoped_open.ts then reaches it without following any symlink, so what is checked is what is used.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "../core/path.ts";
import { existsSync } from "../core/fs.ts";

export interface PathScope {
  /** Tool name, for messages (`tools.<tool>.paths`). */
  tool: string;
  jobDir: string;
  /** Absolute roots, as configured. */
  roots: string[];
  /** Their real paths when the scope was made (null: through a dangling symlink, so nothing is inside). */
  realRoots: (string | null)[];
}

export type ScopedPath = { ok: true; path: string } | { ok: false; reason: string };

export function pathScope(tool: string, jobDir: string, paths: readonly string[] | undefined): PathScope {
  const base = resolve(jobDir);
  const roots = (paths ?? ["."]).map((p) => resolve(base, p));
  return { tool, jobDir: base, roots, realRoots: roots.map(realPathOf) };
}

/** Resolves `requested` inside the scope, or says why it is refused (text for `denied(…)`). */
export function resolveInScope(scope: PathScope, requested: string): Promise<ScopedPath> {
  return Promise.resolve(candidateInScope(scope, resolve(scope.jobDir, requested), requested));
}

/** Like resolveInScope, for an absolute path; `requested` is only used in messages. */
export function candidateInScope(scope: PathScope, absolute: string, requested: string): ScopedPath {
  const outside: ScopedPath = { ok: false, reason: `"${requested}" is outside tools.${scope.tool}.paths` };
  if (!scope.roots.some((root) => isInside(absolute, root))) return outside;
  const real = realPathOf(absolute);
  if (real === null) return { ok: false, reason: `"${requested}" is a symlink to a missing target` };
  return realRootOf(scope, real) === null ? outside : { ok: true, path: real };
}

/** The (deepest) real root that contains the real path `real`, or null. */
export function realRootOf(scope: PathScope, real: string): string | null {
  let found: string | null = null;
  for (const root of scope.realRoots) {
    if (root !== null && isInside(real, root) && (found === null || root.length > found.length)) found = root;
  }
  return found;
}

export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || !(rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest; null at a dangling link. */
export function realPathOf(path: string): string | null {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(Deno.realPathSync(current), ...missing.reverse());
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    if (existsSync(current)) return null;
    const parent = dirname(current);
    if (parent === current) return null;
    missing.push(basename(current));
    current = parent;
  }
}
