/** The commit `--version` names in a source checkout, read from `.git` without a `git` process: git is the oracle. */
import assert from "node:assert/strict";
import { gitCommit } from "./version.ts";

function git(cwd: string, ...args: string[]): string {
  const { code, stdout, stderr } = new Deno.Command("git", {
    args: [
      "-c",
      "user.name=Test",
      "-c",
      "user.email=test@example.com",
      "-c",
      "init.defaultBranch=main",
      ...args,
    ],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  return new TextDecoder().decode(stdout).trim();
}

const head = (cwd: string) => git(cwd, "rev-parse", "HEAD").slice(0, 12);

Deno.test("gitCommit: a checkout's HEAD, on a branch, packed, detached, and in a worktree", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-version-" });
  try {
    const repo = `${dir}/repo`;
    await Deno.mkdir(repo);
    git(repo, "init", "-q");
    git(repo, "commit", "-q", "--allow-empty", "-m", "one");
    assert.equal(gitCommit(repo), head(repo), "a loose branch ref");
    git(repo, "worktree", "add", "-q", "-b", "other", `${dir}/wt`);
    git(`${dir}/wt`, "commit", "-q", "--allow-empty", "-m", "two");
    assert.notEqual(head(`${dir}/wt`), head(repo));
    assert.equal(gitCommit(`${dir}/wt`), head(`${dir}/wt`), "a worktree's branch, in the common directory");
    assert.equal(gitCommit(repo), head(repo), "the main checkout, beside its worktree");
    // A .git file may name its directory relative to the checkout (git worktree --relative-paths, submodules).
    await Deno.writeTextFile(`${dir}/wt/.git`, "gitdir: ../repo/.git/worktrees/wt\n");
    assert.equal(gitCommit(`${dir}/wt`), head(`${dir}/wt`), "a worktree named by a relative path");
    git(repo, "pack-refs", "--all");
    assert.equal(gitCommit(repo), head(repo), "a packed branch ref");
    assert.equal(gitCommit(`${dir}/wt`), head(`${dir}/wt`), "a worktree's packed branch ref");
    git(repo, "checkout", "-q", "--detach");
    assert.equal(gitCommit(repo), head(repo), "a detached HEAD");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gitCommit: null where there is no checkout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-version-" });
  try {
    assert.equal(gitCommit(dir), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
