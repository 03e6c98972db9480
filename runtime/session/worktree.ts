/**
 * A run's own git worktree (`workspace: {isolation: worktree}`, docs/workspaces.md): made on a new branch
 * from `base` before the session opens, the job's directory moved into it (so every tool root, the shell's
 * cwd and its sandbox's write roots are the worktree's), reported in the result, and removed at the end
 * by `keep`. What it is is kept in the session's state, so a resumed run works in the same worktree.
 */
import { ValidationError } from "../core/errors.ts";
import { dirname, join, relative, resolve } from "../core/path.ts";
import { realPathOrNull } from "../core/fs.ts";
import type { WorkspaceConfig } from "../config/job_schema.ts";
import type { ResolvedJob } from "../config/job.ts";
import { enclosingRepo } from "../sandbox/git_repo.ts";

/** A run's worktree as stored with its session. */
export interface Worktree {
  /** The worktree's directory. */
  path: string;
  branch: string;
  /** The commit it started from (full id). */
  base: string;
  /** The repository's own checkout (the git toplevel of the job's directory). */
  checkout: string;
  /** The job's directory relative to the checkout: the same place in the worktree is the job's directory. */
  subdir: string;
  keep: "always" | "on_change" | "never";
}

export interface WorktreeReport {
  path: string;
  branch: string;
  base: string;
  commits: string[];
  changed_files: string[];
  kept: boolean;
}

/** Session state: the run's worktree. */
export const WORKTREE_KEY = "workspace.worktree";

const DEFAULT_BRANCH = "hermes/{{ session_id }}";

async function git(dir: string, args: string[]): Promise<string> {
  const output = await new Deno.Command("git", {
    args: ["-C", dir, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { GIT_TERMINAL_PROMPT: "0" },
  }).output().catch((error) => {
    throw new ValidationError(`Cannot run git for workspace.isolation: worktree: ${error.message}`);
  });
  if (!output.success) {
    const text = new TextDecoder().decode(output.stderr).trim().split("\n").at(-1) ?? "";
    throw new GitError(`git ${args[0]} failed in ${dir}: ${text}`);
  }
  return new TextDecoder().decode(output.stdout);
}

export class GitError extends ValidationError {}

/** The worktree settings in force: the job's `workspace:`, with `--worktree` turning isolation on. */
export function wantsWorktree(spec: ResolvedJob["spec"]): boolean {
  return spec.workspace?.isolation === "worktree";
}

/**
 * Makes the worktree of session `sessionId` for a job in `dir`: a new branch (workspace.branch, default
 * `hermes/<session id>`) from `base` (default HEAD), checked out under `root`/<session id>.
 */
export async function createWorktree(
  dir: string,
  config: WorkspaceConfig,
  options: { sessionId: string; root: string | undefined },
): Promise<Worktree> {
  const real = realPathOrNull(dir) ?? dir;
  const repo = enclosingRepo(real);
  if (repo === null) {
    throw new ValidationError(
      `Cannot give the run its own worktree (workspace.isolation: worktree): ${real} is not in a git repository`,
    );
  }
  const checkout = repo.root;
  const base =
    (await git(checkout, ["rev-parse", "--verify", "--end-of-options", `${config.base ?? "HEAD"}^{commit}`]))
      .trim();
  const branch = (config.branch ?? DEFAULT_BRANCH).replaceAll(/\{\{\s*session_id\s*\}\}/g, options.sessionId);
  await git(checkout, ["check-ref-format", "--branch", branch]);
  const common = repo.outside.at(-1) ?? join(checkout, ".git");
  const root = options.root ?? join(common, "hermes-worktrees");
  await Deno.mkdir(root, { recursive: true });
  const path = join(realPathOrNull(root) ?? root, options.sessionId);
  await git(checkout, ["worktree", "add", "--quiet", "-b", branch, path, base]);
  return {
    path,
    branch,
    base,
    checkout,
    subdir: relative(checkout, real),
    keep: config.keep ?? "on_change",
  };
}

/**
 * A resumed run's worktree: there it is, or it was removed (keep: on_change after a run without changes),
 * then it is checked out again from its branch.
 */
export async function reopenWorktree(worktree: Worktree): Promise<Worktree> {
  if (realPathOrNull(worktree.path) !== null) return worktree;
  await git(worktree.checkout, ["worktree", "prune"]);
  const exists = await git(worktree.checkout, ["branch", "--list", worktree.branch]);
  if (exists.trim() !== "") {
    await git(worktree.checkout, ["worktree", "add", "--quiet", worktree.path, worktree.branch]);
  } else {
    await git(worktree.checkout, [
      "worktree",
      "add",
      "--quiet",
      "-b",
      worktree.branch,
      worktree.path,
      worktree.base,
    ]);
  }
  return worktree;
}

/**
 * The job moved into the worktree: its directory is the same place there. A job that may write (the shell
 * sandbox's write roots) may also write the worktree's git directories, so it can commit on its branch —
 * except a protected job, whose repository .git stays read-only.
 */
export function jobInWorktree(job: ResolvedJob, worktree: Worktree): ResolvedJob {
  const dir = resolve(worktree.path, worktree.subdir);
  let spec = job.spec;
  const shell = spec.tools?.shell;
  if (shell && shell.sandbox !== "off" && !job.protect) {
    const writes = shell.sandbox?.write ?? spec.tools?.write_file?.paths ?? [];
    const repo = enclosingRepo(worktree.path);
    if (writes.length > 0 && repo) {
      spec = {
        ...spec,
        tools: {
          ...spec.tools,
          shell: {
            ...shell,
            sandbox: { ...shell.sandbox, write: [...writes, ...commitPaths(repo, worktree)] },
          },
        },
      };
    }
  }
  return { ...job, spec, dir };
}

/**
 * What committing on the worktree's branch writes, and no more: the worktree's own git directory (index,
 * HEAD), the object store, and the folders of its branch's ref and reflog. Never the repository's hooks,
 * config or other folders, which run code on the host later.
 */
function commitPaths(repo: { outside: string[] }, worktree: Worktree): string[] {
  const [own, common = own] = repo.outside;
  if (own === undefined || common === undefined) return [];
  return [
    own,
    join(common, "objects"),
    dirname(join(common, "refs", "heads", worktree.branch)),
    dirname(join(common, "logs", "refs", "heads", worktree.branch)),
  ];
}

/** What the run did in its worktree: its commits since base and the files that differ from base. */
export async function worktreeChanges(
  worktree: Worktree,
): Promise<{ commits: string[]; changed_files: string[] }> {
  const lines = (text: string) => text.split("\n").filter((line) => line !== "");
  const commits = lines(await git(worktree.path, ["rev-list", "--reverse", `${worktree.base}..HEAD`]));
  const changed = new Set([
    ...lines(await git(worktree.path, ["diff", "--name-only", worktree.base])),
    ...lines(await git(worktree.path, ["ls-files", "--others", "--exclude-standard"])),
  ]);
  return { commits, changed_files: [...changed].sort() };
}

/**
 * The worktree's report at the run's end, after `keep` is applied: on_change removes a worktree without
 * commits or changed files (and its branch), never removes it always (the branch stays when it has commits).
 */
export async function finishWorktree(worktree: Worktree): Promise<WorktreeReport> {
  const { commits, changed_files } = await worktreeChanges(worktree);
  const changed = commits.length > 0 || changed_files.length > 0;
  const keep = worktree.keep === "always" || (worktree.keep === "on_change" && changed);
  if (!keep) await removeWorktree(worktree, { keepBranch: commits.length > 0 });
  return {
    path: worktree.path,
    branch: worktree.branch,
    base: worktree.base,
    commits,
    changed_files,
    kept: keep,
  };
}

/** Removes the worktree (uncommitted changes too) and, unless `keepBranch`, its branch. */
export async function removeWorktree(worktree: Worktree, options: { keepBranch: boolean }): Promise<void> {
  if (realPathOrNull(worktree.path) !== null) {
    await git(worktree.checkout, ["worktree", "remove", "--force", worktree.path]);
  }
  if (!options.keepBranch) {
    await git(worktree.checkout, ["branch", "-D", "--quiet", worktree.branch]).catch(() => {});
  }
}

/**
 * Removes a session's worktree when the session is deleted (`hermes sessions delete`); its branch goes too
 * unless it holds commits since base, which are the run's work: then it stays, and `true` says so.
 */
export async function discardWorktree(worktree: Worktree): Promise<{ branchKept: boolean }> {
  const commits = await git(worktree.checkout, [
    "rev-list",
    "--count",
    `${worktree.base}..${worktree.branch}`,
  ])
    .then((text) => Number(text.trim()), () => 0);
  await removeWorktree(worktree, { keepBranch: commits > 0 });
  return { branchKept: commits > 0 };
}
