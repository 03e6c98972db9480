import assert from "node:assert/strict";
import { checkShellCommand, type ShellRules } from "./policy.ts";

const rules: ShellRules = { allow: ["git *", "echo *", "gh issue *", "grep *"], deny: ["git push *"] };

function allowed(command: string, with_: ShellRules = rules): void {
  assert.equal(checkShellCommand(command, with_), null, `expected ${JSON.stringify(command)} to be allowed`);
}

function refused(command: string, with_: ShellRules = rules): string {
  const reason = checkShellCommand(command, with_);
  assert.ok(reason !== null, `expected ${JSON.stringify(command)} to be denied`);
  return reason;
}

Deno.test("allow patterns: '*' matches anything and 'x *' also matches bare x", () => {
  allowed("git status");
  allowed("git");
  allowed("gh issue list --limit 5");
  allowed("git   log   -1");
  assert.equal(refused("gh pr list"), `"gh pr list" is not in tools.shell.allow`);
  assert.equal(refused("gh"), `"gh" is not in tools.shell.allow`);
  assert.equal(refused("gitx status"), `"gitx status" is not in tools.shell.allow`);
  allowed("make test", { allow: ["make test"] });
  refused("make test2", { allow: ["make test"] });
  allowed("anything at all", { allow: ["*"] });
});

Deno.test("deny wins over allow, also after quote removal and for a bare command", () => {
  assert.equal(refused("git push origin main"), `"git push origin main" matches tools.shell.deny`);
  assert.equal(refused("git push"), `"git push" matches tools.shell.deny`);
  refused("git 'push' origin");
  refused('g"it" pu\\sh origin');
  refused("/usr/bin/git push origin");
  allowed("git show-ref", { allow: ["git *"], deny: ["git show"] });
  // Not a git command: an alias (from a config file) or a git-pushx program, which deny cannot see into.
  assert.match(refused("git pushx", { allow: ["git *"], deny: ["git push"] }), /cannot be checked/);
});

Deno.test("without an allow list everything not denied is allowed", () => {
  const denyOnly = { deny: ["rm *"] };
  allowed("ls -la", denyOnly);
  allowed("curl https://example.com | jq .", denyOnly);
  assert.equal(refused("ls; rm -rf x", denyOnly), `"rm -rf x" matches tools.shell.deny`);
  allowed("rm -rf x", {});
});

Deno.test("every simple command of a compound line is checked", () => {
  const smuggled = [
    "git status; curl x",
    "git log && curl x",
    "git log || curl x",
    "git log | curl x",
    "git log |& curl x",
    "git log & curl x",
    "git log\ncurl x",
    "(curl x)",
    "{ curl x; }",
    "echo $(curl x)",
    "echo `curl x`",
    'echo "$(curl x)"',
    "echo <(curl x)",
    "echo >(curl x)",
    "if git status; then curl x; fi",
    "for f in a; do curl x; done",
    "FOO=1 curl x",
  ];
  for (const command of smuggled) {
    assert.equal(refused(command), `"curl x" is not in tools.shell.allow`, command);
  }
  allowed("git log 'a;b' \"c|d\"");
  allowed("git status 2>&1 | grep -v x && echo done");
  allowed("echo $(git rev-parse HEAD)");
  allowed("FOO=1 git status");
});

Deno.test("dynamic parts: allowed only when every value is allowed, denied when any value is denied", () => {
  allowed("git log $(git rev-parse HEAD) *.ts ~/x");
  assert.equal(refused("$CMD status"), `"$CMD status" is not in tools.shell.allow`);
  refused("git $X origin");
  refused("git pu* origin");
  refused("git {push,status} origin");
  // A glob as git's command may name an alias, which deny cannot see into; without deny it is allowed.
  assert.match(refused("git lo* origin"), /cannot be checked against tools\.shell\.deny/);
  allowed("git lo* origin", { allow: ["git *"] });
  allowed("git log $X");
});

Deno.test("interpreters and wrappers must be allowed themselves; deny applies to what they run", () => {
  assert.equal(refused("eval 'curl x'"), `"eval 'curl x'" is not in tools.shell.allow`);
  refused("bash -c 'git status'");
  refused("sh -c 'git status'");
  const shells = { allow: ["bash *", "git *"], deny: ["git push *", "rm *"] };
  allowed("bash -c 'git status'", shells);
  assert.equal(refused("bash -c 'git push origin'", shells), `"git push origin" matches tools.shell.deny`);
  refused("bash -ec 'rm x'", shells);
  refused("bash -c -- 'rm x'", shells);
  assert.equal(
    refused("bash build.sh", shells),
    `"bash build.sh" runs commands that cannot be checked against tools.shell.deny`,
  );
  refused('bash -c "$SCRIPT"', shells);
  allowed("bash build.sh", { allow: ["bash *"] });

  const denyOnly = { deny: ["rm *"] };
  for (
    const command of [
      "eval 'rm x'",
      "eval rm x",
      "sh -c 'rm x'",
      "bash -o pipefail -c 'rm x'",
      "echo rm x | bash",
      "source ./x.sh",
      ". ./x.sh",
      "env FOO=1 rm x",
      "nice -n 5 rm x",
      "timeout 5 rm x",
      "xargs rm",
      "find . -name '*.tmp' -exec rm {} \\;",
      "sudo -u me rm x",
      "command rm x",
      "exec rm x",
      "nohup sh -c 'rm x'",
      "/bin/rm x",
      "env /bin/rm x",
      "env " + "A=1 ".repeat(100) + "rm x",
      "xargs -0 -n 1 -I{} sh -c 'rm {}'",
      "$RM x",
    ]
  ) refused(command, denyOnly);
  allowed("find . -name '*.ts' -exec grep -l x {} +", denyOnly);
  allowed("timeout 5 ls", denyOnly);
  allowed("bash -c 'ls -la'", denyOnly);
});

Deno.test("file redirections are denied; /dev/null, descriptor dups and here-strings are not", () => {
  const any = {};
  for (
    const command of ["echo hi > out", "echo >>out", "echo &> out", "echo &>>out", "echo >| out", "cat < in"]
  ) {
    assert.match(
      refused(command, any),
      /redirects to or from a file .*use read_file and write_file/,
      command,
    );
  }
  refused("echo 2> err", any);
  refused("echo >& out", any);
  refused("cat <> rw", any);
  refused("echo > $OUT", any);
  refused("(echo hi) > out", any);
  refused("while true; do echo; done > out", any);
  refused("bash -c 'echo hi > out'", any);
  allowed("echo hi > /dev/null 2>&1", any);
  allowed("echo hi >&2 2>/dev/stderr 3>&- 1>/dev/stdout", any);
  allowed("grep x <<< 'text' < /dev/null", any);
});

Deno.test("assignments that change which program runs are denied", () => {
  assert.match(refused("PATH=. git status"), /^assigning PATH is not allowed/);
  refused("LD_PRELOAD=x.so git status");
  refused("IFS=/; git status");
  refused("BASH_ENV=x bash -c 'git status'", { allow: ["bash *", "git *"] });
  allowed("GIT_PAGER=cat git log");
});

Deno.test("unparseable command lines are denied with the reason", () => {
  assert.equal(refused("echo 'a;b", {}), `cannot check "echo 'a;b": unterminated single quote`);
  assert.match(refused("cat <<EOF\nx\nEOF", {}), /heredocs/);
  assert.match(refused("bash -c 'echo \"x'", { allow: ["bash *"] }), /unterminated double quote/);
  assert.match(refused("eval " + "eval ".repeat(20) + "x", {}), /nested too deeply/);
});
