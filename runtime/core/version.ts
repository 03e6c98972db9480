/**
 * The Hermes version, shared by `--version`, JSON-RPC `initialize` and ACP; and the commit it was built from.
 * `--version` is measured against a bare `deno run` (bench/startup_bench.ts): the commit is read with plain
 * string paths (no path.ts: the OS resolves a `..`, and each function V8 compiles on its first call costs the
 * start a little).
 */

export const VERSION = "0.2.0";

/** `deno task release` replaces this marker in dist/hermes.js with the commit (scripts/release.ts). */
const EMBEDDED_COMMIT: string = "__HERMES_COMMIT__";

/**
 * The commit this program was built from: embedded at release time, else read from the checkout's `.git`
 * (files only, no `git` process: `--version` stays as fast as before), else null.
 */
export function buildCommit(): string | null {
  if (!EMBEDDED_COMMIT.startsWith("__")) return EMBEDDED_COMMIT || null;
  // runtime/core/version.ts → the checkout's root (a file path only when run from files).
  const dir = import.meta.dirname;
  return dir?.endsWith("/runtime/core") ? gitCommit(dir.slice(0, -"/runtime/core".length)) : null;
}

/** `hermes 0.2.0 (1a2b3c4d5e6f)`, or without the commit where none is known. */
export function versionLine(): string {
  const commit = buildCommit();
  return `hermes ${VERSION}${commit ? ` (${commit})` : ""}`;
}

/**
 * HEAD's commit of the checkout at `root` (worktrees and packed refs too), shortened to 12; else null. Each
 * file is read where it is expected first: a failed read costs `--version` its error (the first one a
 * process makes, ~0.4 ms). A clone's checkout reads two files and fails none; a worktree fails one.
 */
export function gitCommit(root: string): string | null {
  try {
    let gitDir = `${root}/.git`;
    let common = gitDir;
    // .git/HEAD read at once rather than .git's kind asked first: a statSync costs ~0.3 ms (its FileInfo).
    let head: string;
    try {
      head = Deno.readTextFileSync(`${gitDir}/HEAD`);
    } catch {
      // .git is a file naming the directory (a worktree, a submodule); or there is none, and this throws.
      const pointer = /^gitdir:\s*(.+)$/m.exec(Deno.readTextFileSync(gitDir))?.[1]?.trim();
      if (!pointer) return null;
      gitDir = pointer.startsWith("/") ? pointer : `${root}/${pointer}`;
      // A worktree keeps its HEAD; its branches live in the common directory (a submodule has none).
      try {
        const shared = Deno.readTextFileSync(`${gitDir}/commondir`).trim();
        common = shared.startsWith("/") ? shared : `${gitDir}/${shared}`;
      } catch { /* not a worktree */ }
      head = Deno.readTextFileSync(`${gitDir}/HEAD`);
    }
    head = head.trim();
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
    if (ref === undefined) return /^[0-9a-f]{40}$/.test(head) ? head.slice(0, 12) : null;
    for (const dir of new Set([common, gitDir])) {
      try {
        return Deno.readTextFileSync(`${dir}/${ref}`).trim().slice(0, 12);
      } catch { /* packed, or in the other directory */ }
    }
    const packed = Deno.readTextFileSync(`${common}/packed-refs`);
    const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
    return line ? line.slice(0, 12) : null;
  } catch {
    return null;
  }
}
