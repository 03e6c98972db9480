import assert from "node:assert/strict";
import { join } from "node:path";
import { enclosingRepo, withoutCredentials } from "./git_repo.ts";

Deno.test("withoutCredentials: extraheader, credential sections and URL passwords go; the rest stays", () => {
  const config = `[core]
\trepositoryformatversion = 0
[remote "origin"]
\turl = https://x-access-token:ghs_SECRET@github.com/o/r.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
[http "https://github.com/"]
\textraheader = AUTHORIZATION: basic SECRET64
[credential "https://example.com"]
\thelper = store --file /secret/creds
\tusername = me
[branch "main"]
\tremote = origin
`;
  const clean = withoutCredentials(config)!;
  assert.doesNotMatch(clean, /SECRET|extraheader|helper|username/);
  assert.match(clean, /url = https:\/\/github\.com\/o\/r\.git/);
  assert.match(clean, /\[branch "main"\]\n\tremote = origin/);
  assert.match(clean, /repositoryformatversion = 0/);
  assert.equal(withoutCredentials("[core]\n\tbare = false\n"), null, "nothing to remove: no copy needed");
  // Git's keys are case-insensitive.
  assert.doesNotMatch(withoutCredentials("[http]\n\tExtraHeader = x: SECRET\n")!, /SECRET/);
});

Deno.test("enclosingRepo: the nearest .git upwards; a linked worktree names its git directories", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-git-" }));
  try {
    await Deno.mkdir(join(dir, "main/.git/worktrees/wt"), { recursive: true });
    await Deno.writeTextFile(join(dir, "main/.git/worktrees/wt/commondir"), "../..\n");
    await Deno.mkdir(join(dir, "main/src/deep"), { recursive: true });
    await Deno.mkdir(join(dir, "wt/sub"), { recursive: true });
    await Deno.writeTextFile(join(dir, "wt/.git"), `gitdir: ${dir}/main/.git/worktrees/wt\n`);
    assert.deepEqual(enclosingRepo(join(dir, "main/src/deep")), {
      root: join(dir, "main"),
      outside: [],
      config: join(dir, "main/.git/config"),
    });
    assert.deepEqual(enclosingRepo(join(dir, "wt/sub")), {
      root: join(dir, "wt"),
      outside: [join(dir, "main/.git/worktrees/wt"), join(dir, "main/.git")],
      config: join(dir, "main/.git/config"),
    });
    assert.equal(enclosingRepo("/"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
