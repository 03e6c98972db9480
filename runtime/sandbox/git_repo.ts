/**
 * Git repositories as the sandbox sees them: the repository a directory lies in (its worktree root and
 * the git directories it uses, so a job in a repository under the private /tmp still sees it), and a
 * repository config without credentials. CI checkouts persist their token in `.git/config`
 * (`http.https://github.com/.extraheader = AUTHORIZATION: basic …`); a sandboxed command reads a copy
 * without such lines unless that config file itself is granted.
 */
import { dirname, join, resolve } from "../core/path.ts";
import { readTextOrNull } from "../core/fs.ts";

export interface GitRepo {
  /** The worktree root (the directory holding `.git`). */
  root: string;
  /** Git directories outside the worktree it needs: a linked worktree's gitdir and the common dir. */
  outside: string[];
  /** The repository config file git reads. */
  config: string;
}

/** The repository `dir` lies in (nearest `.git` upwards), or null. Paths are real. */
export function enclosingRepo(dir: string): GitRepo | null {
  for (let at = dir;; at = dirname(at)) {
    const dotGit = join(at, ".git");
    const info = lstatOrNull(dotGit);
    if (info?.isDirectory) return { root: at, outside: [], config: join(dotGit, "config") };
    if (info?.isFile) {
      const gitdir = /^gitdir:\s*(.+)$/m.exec(readTextOrNull(dotGit) ?? "")?.[1]?.trim();
      if (gitdir) {
        const real = realOrNull(resolve(at, gitdir));
        if (real) {
          const common = readTextOrNull(join(real, "commondir"))?.trim();
          const commonDir = common ? realOrNull(resolve(real, common)) : null;
          const base = commonDir ?? real;
          return { root: at, outside: [...new Set([real, base])], config: join(base, "config") };
        }
      }
    }
    if (at === "/") return null;
  }
}

/**
 * `text` (a git config file) without credentials: extraheader entries, `[credential …]` sections, and
 * user:password in URLs. Null when there is nothing to remove.
 */
export function withoutCredentials(text: string): string | null {
  let changed = false;
  let inCredential = false;
  const kept: string[] = [];
  for (const line of text.split("\n")) {
    const section = /^\s*\[\s*([^\]\s"]+)/.exec(line)?.[1];
    if (section !== undefined) inCredential = section.toLowerCase() === "credential";
    const key = /^\s*([A-Za-z][\w-]*)\s*(=|$)/.exec(line)?.[1]?.toLowerCase();
    if (inCredential || key === "extraheader") {
      changed = true;
      continue;
    }
    const url = line.replace(/(\w+:\/\/)[^/@\s]+@/g, "$1");
    if (url !== line) changed = true;
    kept.push(url);
  }
  return changed ? kept.join("\n") : null;
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

function realOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}
