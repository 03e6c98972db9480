import assert from "node:assert/strict";
import { checkShellCommand, type ShellRules } from "./policy.ts";

const push: ShellRules = {
  allow: ["git *", "echo *", "sudo *", "timeout *", "env *", "xargs *", "nice *"],
  deny: [
    "git push *",
  ],
};

function allowed(command: string, rules: ShellRules = push): void {
  assert.equal(checkShellCommand(command, rules), null, `expected ${JSON.stringify(command)} to be allowed`);
}

const denyOnly: ShellRules = { deny: ["git push *"] };

/** Refused with the README's rules, and by deny alone (so it is deny that sees it). */
function deniedBoth(command: string): string {
  refused(command);
  const reason = refused(command, denyOnly);
  assert.match(reason, /matches tools\.shell\.deny|cannot be checked against tools\.shell\.deny/, command);
  return reason;
}

function refused(command: string, rules: ShellRules = push): string {
  const reason = checkShellCommand(command, rules);
  assert.ok(reason !== null, `expected ${JSON.stringify(command)} to be denied`);
  return reason;
}

Deno.test("git deny: global options before the command do not hide it", () => {
  for (
    const command of [
      "git -C . push",
      "git -C /some/repo push origin main",
      "git -c k=v push",
      "git -c user.name=x -c user.email=y push --force",
      "git --no-pager push",
      "git -P push",
      "git -p push",
      "git --paginate push",
      "git --git-dir=x --work-tree=y push",
      "git --git-dir x --work-tree y push",
      "git --exec-path=/usr/lib/git-core push",
      "git --namespace=n push",
      "git --namespace n push",
      "git --bare push",
      "git --literal-pathspecs --no-optional-locks --no-replace-objects --no-lazy-fetch push",
      "git --attr-source HEAD push",
      "git -C . -c a=b --no-pager push origin HEAD",
      "git '-C' . 'push'",
      "/usr/bin/git -C . push",
    ]
  ) {
    assert.match(deniedBoth(command), /matches tools\.shell\.deny/, command);
  }
});

Deno.test("git deny: a push under another name is a push", () => {
  for (
    const command of [
      "git send-pack origin main",
      "git -C . send-pack ../remote.git main",
      "git http-push https://example.com/repo.git main",
      "git remote-https origin https://example.com/repo.git",
      "git subtree push --prefix lib origin main",
      "git-push origin main",
      "/usr/lib/git-core/git-send-pack ../remote.git main",
    ]
  ) {
    assert.match(deniedBoth(command), /matches tools\.shell\.deny/, command);
  }
});

Deno.test("git deny: aliases, and what git runs from options, config and environment", () => {
  for (
    const command of [
      "git -c alias.p=push p origin",
      "git -c alias.P=push P",
      "git -c 'alias.p=!git push' p",
      "git -c alias.p=q -c alias.q=push p",
      "git -c 'core.sshCommand=git push' fetch",
      "git -c 'diff.external=sh -c \"git push\"' diff",
      "GIT_SSH_COMMAND='git push' git fetch",
      "env GIT_EXTERNAL_DIFF='git push' git diff",
      "export GIT_EDITOR='git push'",
      "GIT_SEQUENCE_EDITOR='git push' git rebase -i HEAD~2",
      "git rebase -x 'git push' HEAD~1",
      "git rebase --exec='git push' main",
      "git submodule foreach git push",
      "git submodule foreach --recursive 'git push origin'",
      "git bisect run git push",
      "git ls-remote --upload-pack='git push' .",
      "git -c filter.x.clean='git push' add .",
    ]
  ) {
    assert.match(deniedBoth(command), /matches tools\.shell\.deny/, command);
  }
});

Deno.test("git deny: what cannot be read is refused while deny patterns exist", () => {
  for (
    const command of [
      "git p",
      "git lg --graph",
      "git --config-env=alias.p=ALIAS p",
      "git --config-env=core.sshCommand=CMD fetch",
      "git -c core.hooksPath=./hooks commit -m x",
      "git -c include.path=./extra.gitconfig status",
      "git -c protocol.ext.allow=always ls-remote ext::x",
      "GIT_CONFIG_PARAMETERS=\"'alias.x=push'\" git x",
      "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.s GIT_CONFIG_VALUE_0=push git status",
      "GIT_EXEC_PATH=./bin git status",
      "git $OPT push",
      "git --unknown-option push",
      'git -c "$SETTING" status',
    ]
  ) {
    assert.match(deniedBoth(command), /cannot be checked against tools\.shell\.deny|matches/, command);
  }
  assert.equal(
    refused("git lg"),
    `"git lg" runs commands that cannot be checked against tools.shell.deny ("git lg" is not a git ` +
      "command, so an alias or a git-lg program whose commands are not shown)",
  );
});

Deno.test("git deny: every program-running key, also when written with git config for later", () => {
  for (
    const command of [
      "git -c gpg.ssh.defaultKeyCommand='git push' commit -S -m x",
      "git -c core.alternateRefsCommand='git push' fetch ../other",
      "git -c 'submodule.lib.update=!git push' submodule update",
      "git -c trailer.sign.command='git push' interpret-trailers",
      "git -c gpg.ssh.program='git push' commit -S -m x",
      "git -c credential.https://x.helper='!git push' fetch",
      "git config core.fsmonitor 'git push'",
      "git config --global alias.p '!git push'",
      "git -C out/repo config set core.sshCommand 'git push'",
      "git config --file out/home/.gitconfig core.fsmonitor 'git push origin main'",
      "git config --add remote.origin.uploadpack 'git push'",
      "git config filter.x.clean 'git push'",
      "git config 'submodule.lib.update' '!git push'",
    ]
  ) {
    assert.match(deniedBoth(command), /matches tools\.shell\.deny/, command);
  }
});

Deno.test("git deny: another HOME, config file, repository or program directory cannot be checked", () => {
  for (
    const command of [
      "HOME=../out git status",
      "XDG_CONFIG_HOME=../out git status",
      "HOME=out/home; git status",
      "export HOME=out/home",
      "env HOME=out/home git status",
      "GIT_DIR=out/planted.git git status",
      "GIT_WORK_TREE=out git status",
      "GIT_COMMON_DIR=out/planted.git git status",
      "GIT_CONFIG=out/c git status",
      "GIT_CONFIG_GLOBAL=out/c git status",
      "GIT_CONFIG_SYSTEM=out/c git status",
      "GIT_CONFIG_NOSYSTEM=0 git status",
      "GIT_TEMPLATE_DIR=out/t git init out/x",
      "unset GIT_CONFIG_COUNT; git status",
      "unset GIT_CONFIG_GLOBAL HOME",
      "export -n GIT_CONFIG_NOSYSTEM",
      "env -u GIT_CONFIG_COUNT git status",
      "env --unset=GIT_CONFIG_GLOBAL git status",
      "env -i git -C out/planted status",
      "git --git-dir=out/planted.git status",
      "git --git-dir out/planted.git log",
      "git --work-tree=out status",
      "git -c init.templateDir=out/t init out/y",
      "git -c remote.origin.vcs=evil fetch origin",
      "git -c url.ext::sh.insteadOf=origin fetch origin",
      "git -c core.worktree=out status",
      "git -c core.hooksPath=out/hooks commit -m x",
      "git config include.path ../out/x",
      "git config remote.origin.vcs evil",
      "git config url.ext::sh.insteadOf origin",
      "git config init.templateDir out/t",
      'git config core.sshCommand "$CMD"',
    ]
  ) {
    assert.match(deniedBoth(command), /cannot be checked against tools\.shell\.deny|matches/, command);
  }
  // Allowed as ever: -C (planted repository config is switched off by the environment), reading config,
  // harmless values, other variables.
  for (
    const command of [
      "git -C out/repo status",
      "git config user.name x",
      "git config --get core.fsmonitor",
      "git config core.fsmonitor false",
      "git config submodule.lib.update rebase",
      "GIT_AUTHOR_NAME=x git commit -m y",
      "HOMEPAGE=x git status",
    ]
  ) {
    allowed(command);
    assert.equal(checkShellCommand(command, denyOnly), null, command);
  }
});

Deno.test("git deny: wrappers see through to git's grammar", () => {
  for (
    const command of [
      "sudo -u me git -C . push",
      "timeout 5 git --no-pager push",
      "env -C . git -c x=y push",
      "nice -n 5 git -P push",
      "xargs git -C . push",
      "echo push | xargs git",
      "echo push | xargs -I{} git {} origin",
      "find . -maxdepth 0 -exec git {} \\;",
    ]
  ) {
    deniedBoth(command);
  }
});

Deno.test("git deny: the allowed forms still pass", () => {
  for (
    const command of [
      "git status",
      "git -C . log",
      "git -C . log --oneline -5",
      "git --no-pager log --grep push",
      "git -c user.name=x -c user.email=y commit -m 'push the fix'",
      "git log --oneline -- push",
      "git stash push -m wip",
      "git help push",
      "git --version",
      "git --help",
      "git -c alias.st=status st",
      "git -c core.fsmonitor=false status",
      "git -c core.pager=cat log",
      "GIT_PAGER=cat git log",
      "git fetch origin",
      "git remote -v",
      "git show-ref",
      "echo x | xargs git log",
      "timeout 5 git status",
    ]
  ) {
    allowed(command);
  }
});

Deno.test("git allow: commands git runs for an allowed git line must be allowed themselves", () => {
  const rules: ShellRules = { allow: ["git *"] };
  const cases: [string, string][] = [
    ["git -c 'alias.x=!touch x' x", "touch x"],
    ["git -c 'core.fsmonitor=touch x' status", "touch x"],
    ["git -c 'core.sshCommand=touch x' fetch", "touch x"],
    ["git -c 'filter.x.clean=touch x' add .", "touch x"],
    ["git -c diff.external=touchy diff", "touchy"],
    ["GIT_EXTERNAL_DIFF='touch x' git diff", "touch x"],
    ["git ls-remote --upload-pack='touch x' .", "touch x"],
    ["git clone -u 'touch x' ./a ./b", "touch x"],
    ["git rebase -x 'touch x' main", "touch x"],
    ["git submodule foreach 'touch x'", "touch x"],
    ["git bisect run touch x", "touch x"],
    ["git -c alias.x=-c -c alias.y=!touch y", "touch"],
  ];
  for (const [command, inner] of cases) {
    const reason = refused(command, rules);
    assert.ok(reason.startsWith(`"${inner}`), `${command}: ${reason}`);
    assert.match(reason, /is not in tools\.shell\.allow \(run by ".*" through .*\)$/, command);
  }
  allowed("git -c alias.l=log l --oneline", rules);
  allowed("git -c 'alias.x=!git status' x", rules);
  allowed("git -c 'core.sshCommand=touch x' fetch", { allow: ["git *", "touch *"] });
  allowed("GIT_EDITOR=true git commit --amend", { allow: ["git *", "true"] });
});

Deno.test("git allow: what prefix patterns cannot see stays allowed (the sandbox bounds it)", () => {
  const rules: ShellRules = { allow: ["git *"] };
  // Hooks and aliases already in config files, and files git writes: only the sandbox limits these.
  allowed("git commit -m x", rules);
  allowed("git lg", rules);
  allowed("git -c core.hooksPath=./hooks commit -m x", rules);
  allowed("git log --output=/etc/x", rules);
  allowed("git archive --output=../x.tar HEAD", rules);
});

Deno.test("other programs: leading options are read both ways for deny", () => {
  const rules: ShellRules = { deny: ["kubectl delete *", "docker run *", "npm publish *", "rm -rf *"] };
  for (
    const command of [
      "kubectl -n prod delete pod x",
      "kubectl --context=prod --namespace prod delete pod x",
      "docker -H tcp://x:2375 run img",
      "docker --log-level debug --tls run img",
      "npm --registry https://r publish",
      "rm -v -rf x",
    ]
  ) {
    assert.match(refused(command, rules), /matches tools\.shell\.deny/, command);
  }
  allowed("kubectl -n prod get pods", rules);
  allowed("docker -H tcp://x ps", rules);
  allowed("npm --registry https://r install", rules);
  allowed("rm -v x", rules);
});

Deno.test("wrappers: a command string given to a wrapper is checked against deny", () => {
  const rules: ShellRules = { deny: ["rm *"] };
  for (
    const command of [
      "su -c 'rm x'",
      "su me -c 'rm -rf x'",
      "flock /tmp/lock -c 'rm x'",
      "watch -n 1 'rm x'",
      "script -qc 'rm x' /dev/null",
      "echo x | xargs -I{} {} y",
      "find . -exec {} \\;",
    ]
  ) {
    refused(command, rules);
  }
  allowed("flock /tmp/lock -c 'ls -la'", rules);
  allowed("watch -n 1 'ls x'", rules);
  allowed("find . -name '*.ts' -exec grep -l x {} +", rules);
  allowed("echo a | xargs grep x", rules);
});
