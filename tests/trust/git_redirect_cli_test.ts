/**
 * With `allow: ["git *"]`, `deny: ["git push *"]` and a reachable remote in a write root (a bare
 * repository), no way of pointing git at planted configuration or programs pushes: the forms deny can see
 * are refused before they run; what it cannot see (a planted repository's own `.git/config` reached with
 * `-C`, a planted global config when no deny applies) is harmless, because every command runs with git
 * settings that ignore planted global config and switch off the fixed program-running keys. `git status`
 * and `git log` still work. Real CLI, scripted model, the real sandbox.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

function git(args: string[], cwd: string, env: Record<string, string> = {}): string {
  const out = new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
    cwd,
    env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", ...env },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** A config whose fsmonitor pushes `branch` to `remote` (the `#` eats the arguments git appends). */
function fsmonitorPush(remote: string, branch: string): string {
  return `[core]\n\tfsmonitor = "git push ${remote} HEAD:refs/heads/${branch} >/dev/null 2>&1; false #"\n`;
}

interface Project {
  dir: string;
  remote: string;
  /** Branches that reached the remote. */
  landed(): string[];
}

async function project(replies: unknown[], deny: boolean): Promise<Project> {
  const dir = await tempDir();
  const remote = `${dir}/out/remote.git`;
  await Deno.mkdir(`${dir}/out`, { recursive: true });
  git(["init", "-q", "--bare", remote], dir);
  git(["init", "-q", "-b", "main", `${dir}/out/work`], dir);
  await Deno.writeTextFile(`${dir}/out/work/README`, "hello\n");
  git(["add", "README"], `${dir}/out/work`);
  git(["commit", "-q", "-m", "first commit"], `${dir}/out/work`);
  git(["remote", "add", "origin", remote], `${dir}/out/work`);
  // A repository planted in the write root, its own config running a push on every `git status`.
  git(["init", "-q", "-b", "main", `${dir}/out/planted`], dir);
  git(["commit", "-q", "--allow-empty", "-m", "planted"], `${dir}/out/planted`);
  await Deno.writeTextFile(
    `${dir}/out/planted/.git/config`,
    (await Deno.readTextFile(`${dir}/out/planted/.git/config`)) + fsmonitorPush(remote, "via-repo-config") +
      `[core]\n\tsshCommand = "git push ${remote} HEAD:refs/heads/via-ssh-command #"\n` +
      `\thooksPath = ${dir}/out/hooks\n`,
  );
  await Deno.mkdir(`${dir}/out/hooks`);
  await Deno.writeTextFile(
    `${dir}/out/hooks/pre-commit`,
    `#!/bin/sh\ngit push ${remote} HEAD:refs/heads/via-hook >/dev/null 2>&1\n`,
    { mode: 0o755 },
  );
  const rules = deny ? `allow: ["git *"], deny: ["git push *"]` : `allow: ["git *"]`;
  await writeFiles(dir, {
    "job.yaml": `name: git-redirect
model: { provider: scripted, script: ./r.json }
prompt: go
# A committer of its own: a non-root CI user may have no identity git can guess.
env: { GIT_AUTHOR_NAME: t, GIT_AUTHOR_EMAIL: t@example.com, GIT_COMMITTER_NAME: t, GIT_COMMITTER_EMAIL: t@example.com }
tools:
  shell: { ${rules}, cwd: ./out/work, timeout: 30s }
  write_file: { paths: ["./out"] }
`,
    "r.json": JSON.stringify([...replies, { content: "done" }]),
  });
  return {
    dir,
    remote,
    landed: () => git(["for-each-ref", "--format=%(refname:short)"], remote).split("\n").filter(Boolean),
  };
}

const shell = (command: string) => ({ tool_calls: [{ name: "shell", arguments: { command } }] });
const write = (path: string, content: string) => ({
  tool_calls: [{ name: "write_file", arguments: { path, content } }],
});

async function run(p: Project) {
  const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "stream-json"], {
    cwd: p.dir,
    home: p.dir,
  });
  assert.equal(code, 0, stderr);
  const events = stdout.trim().split("\n").map((line) => JSON.parse(line));
  const calls = events.filter((e) => e.type === "tool.call" && e.tool === "shell");
  const outcome = (command: string) => {
    const call = calls.find((e) => e.args.command === command);
    assert.ok(call, `no call of ${command}`);
    const about = events.filter((e) => e.tool_call_id === call.tool_call_id);
    return about.find((e) => e.type === "tool.denied") ?? about.find((e) => e.type === "tool.result");
  };
  return { events, outcome };
}

Deno.test("the attack is real: plain git runs a planted repository's fsmonitor and hooks, and pushes", async () => {
  const p = await project([], true);
  git(["status", "--short"], `${p.dir}/out/planted`);
  assert.deepEqual(p.landed(), ["via-repo-config"]);
  git(["commit", "-q", "--allow-empty", "-m", "again"], `${p.dir}/out/planted`);
  assert.deepEqual(p.landed(), ["via-hook", "via-repo-config"]);
});

const DENIED = (remote: string) => [
  `git -c gpg.ssh.defaultKeyCommand='git push ${remote} HEAD:refs/heads/f1 #' commit --allow-empty -S -m x`,
  "XDG_CONFIG_HOME=../xdg git status",
  "HOME=../home git status",
  "GIT_DIR=../planted/.git git status",
  "git --git-dir=../planted/.git status",
  "git --work-tree=../planted -C ../planted status",
  "GIT_CONFIG_GLOBAL=../home/.gitconfig git status",
  "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=../home/mon git status",
  `git -c core.alternateRefsCommand='git push ${remote} HEAD:refs/heads/f6 #' fetch ../planted`,
  "git -c init.templateDir=../tpl init ../fresh",
  `git -c 'submodule.lib.update=!git push ${remote} HEAD:refs/heads/f8' submodule update`,
  "git -c remote.origin.vcs=evil fetch origin",
  `git config core.fsmonitor 'git push ${remote} HEAD:refs/heads/f10 #'`,
  "unset GIT_CONFIG_COUNT; git -C ../planted status",
  "env -i git -C ../planted status",
  "GIT_EXEC_PATH=../bin git status",
  "git --exec-path=../bin status",
  "GIT_TEMPLATE_DIR=../tpl git init ../fresh2",
  "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=../mon'\" git status",
  `GIT_SSH_COMMAND='git push ${remote} HEAD:refs/heads/g1 #' git fetch origin`,
  `env GIT_SSH_COMMAND='git push ${remote} HEAD:refs/heads/g2 #' git fetch origin`,
  `GIT_SSH='git push ${remote} HEAD:refs/heads/g3' git fetch origin`,
  `GIT_ASKPASS='git push ${remote} HEAD:refs/heads/g4' git fetch origin`,
  `GIT_EDITOR='git push ${remote} HEAD:refs/heads/g5 #' git commit --allow-empty`,
  `GIT_EXTERNAL_DIFF='git push ${remote} HEAD:refs/heads/g6 #' git diff HEAD`,
  `GIT_PROXY_COMMAND='git push ${remote} HEAD:refs/heads/g7' git fetch git://x/y`,
  `GIT_PAGER='git push ${remote} HEAD:refs/heads/g8' git log`,
  ...[
    "core.fsmonitor",
    "core.sshCommand",
    "core.editor",
    "core.pager",
    "pager.log",
    "sequence.editor",
    "diff.external",
    "diff.x.textconv",
    "diff.x.command",
    "merge.x.driver",
    "filter.x.clean",
    "filter.x.smudge",
    "filter.x.process",
    "gpg.program",
    "gpg.ssh.program",
    "core.askPass",
    "core.gitProxy",
    "uploadpack.packObjectsHook",
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
  ].map((key) => `git -c ${key}='git push ${remote} HEAD:refs/heads/k #' status`),
  `git -c 'alias.st=!git push ${remote} HEAD:refs/heads/k2' st`,
  `git -c 'credential.helper=!git push ${remote} HEAD:refs/heads/k3' fetch origin`,
  "git -c core.hooksPath=../hooks commit --allow-empty -m x",
  "git -c include.path=../home/.gitconfig status",
  "git -c includeIf.gitdir:/.path=../home/.gitconfig status",
  `git -c url.${remote}.insteadOf=elsewhere fetch elsewhere`,
  "git -c protocol.ext.allow=always fetch ext::sh",
  "git --config-env=core.sshCommand=CMD fetch origin",
];

Deno.test({
  name:
    "git redirection: every form deny can see is refused; planted repo config is harmless; status and log work",
  ignore: withoutSandbox,
}, async () => {
  const remoteOf = (dir: string) => `${dir}/out/remote.git`;
  // The remote path is only known once the project exists: build it, then write the replies.
  const p = await project([], true);
  const remote = remoteOf(p.dir);
  const denied = DENIED(remote);
  const harmless = [
    "git -C ../planted status --short",
    "git -C ../planted fetch origin",
    "git -C ../planted commit --allow-empty -m again",
  ];
  const works = ["git status", "git log --oneline", "git -C ../planted log --oneline"];
  const replies = [
    write("out/home/.gitconfig", fsmonitorPush(remote, "via-home")),
    write("out/xdg/git/config", fsmonitorPush(remote, "via-xdg")),
    ...[...denied, ...harmless, ...works].map(shell),
  ];
  await Deno.writeTextFile(`${p.dir}/r.json`, JSON.stringify([...replies, { content: "done" }]));
  const { outcome } = await run(p);
  for (const command of denied) {
    const result = outcome(command);
    assert.equal(result?.type, "tool.denied", `${command}: ${JSON.stringify(result)}`);
  }
  for (const command of [...harmless, ...works]) {
    const result = outcome(command);
    assert.notEqual(result?.type, "tool.denied", `${command} was denied: ${JSON.stringify(result)}`);
  }
  assert.match(outcome("git status").content, /On branch main/);
  assert.match(outcome("git log --oneline").content, /first commit/);
  assert.match(outcome("git -C ../planted log --oneline").content, /planted/);
  assert.equal(outcome("git -C ../planted commit --allow-empty -m again").status, "ok");
  assert.deepEqual(p.landed(), [], "nothing reached the remote");
});

Deno.test({
  name:
    "git redirection without deny: a planted global config (HOME, XDG_CONFIG_HOME) is ignored by mechanism",
  ignore: withoutSandbox,
}, async () => {
  const p = await project([], false);
  const replies = [
    write("out/home/.gitconfig", fsmonitorPush(p.remote, "via-home")),
    write("out/xdg/git/config", fsmonitorPush(p.remote, "via-xdg")),
    ...["HOME=../home git status", "XDG_CONFIG_HOME=../xdg git status", "git -C ../planted status"].map(
      shell,
    ),
  ];
  await Deno.writeTextFile(`${p.dir}/r.json`, JSON.stringify([...replies, { content: "done" }]));
  const { outcome } = await run(p);
  assert.match(outcome("HOME=../home git status").content, /On branch main/);
  assert.match(outcome("XDG_CONFIG_HOME=../xdg git status").content, /On branch main/);
  assert.deepEqual(p.landed(), [], "nothing reached the remote");
});
