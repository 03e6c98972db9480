/**
 * The shell tool through the real OS sandbox (the temp directory is its write root, so a denied command
 * could have written there), and on the host for what `sandbox: off` keeps. Skipped with the reason where
 * bwrap cannot run, except in CI.
 */
import assert from "node:assert/strict";
import { shellTool, type ShellToolOptions } from "./tool.ts";
import type { ToolContext } from "../tool.ts";
import type { ShellSandbox } from "./sandbox.ts";
import { exists as pathExists } from "../../core/fs.ts";
import { sandboxTests } from "../../sandbox/_testing.ts";
import { callTool } from "../_testing.ts";

const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", HERMES_TEST_VALUE: "from-context" };
const { probe, ignore } = await sandboxTests("shell tests", ENV.PATH);

/** A sandbox whose only write root is `dir`. */
function sandboxIn(dir: string): ShellSandbox {
  if (!probe.ok) throw new Error(`the sandbox does not work here: ${probe.reason}`);
  return { bwrap: probe, read: null, write: [{ path: dir, required: true }], hide: [], net: false };
}

function test(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore, fn });
}

async function setup(options: Partial<ShellToolOptions> = {}) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-" }));
  const tool = shellTool({
    cwd: dir,
    timeoutMs: 30_000,
    maxOutput: 64 * 1024,
    sandbox: sandboxIn(dir),
    ...options,
  });
  const context = (signal = new AbortController().signal): ToolContext => ({
    session_id: "s1",
    job_dir: dir,
    env: ENV,
    host_env: ENV,
    signal,
  });
  const run = (command: string, signal?: AbortSignal) => callTool(tool, { command }, context(signal));
  const exists = (name: string) => pathExists(`${dir}/${name}`);
  return { dir, tool, run, exists };
}

test("shell: the spec is the contract's `shell {command}`", async () => {
  const { tool } = await setup({ allow: ["git *"] });
  assert.equal(tool.spec.name, "shell");
  assert.deepEqual((tool.spec.parameters as { required: string[] }).required, ["command"]);
  assert.match(tool.spec.description, /Allowed commands: git \*/);
});

test("shell: every smuggling form is denied and never executed", async () => {
  const { run, exists } = await setup({ allow: ["echo *", "git *", "true"], deny: ["git push *"] });
  const forms = [
    "echo hi; touch marker",
    "echo hi && touch marker",
    "true || touch marker; touch marker",
    "echo hi | touch marker",
    "echo hi & touch marker",
    "echo hi\ntouch marker",
    "(touch marker)",
    "{ touch marker; }",
    "echo $(touch marker)",
    "echo `touch marker`",
    'echo "$(touch marker)"',
    "cat <(touch marker)",
    "echo >(touch marker)",
    "eval 'touch marker'",
    "bash -c 'touch marker'",
    "sh -c 'touch marker'",
    "FOO=1 touch marker",
    "if true; then touch marker; fi",
  ];
  for (const command of forms) {
    const outcome = await run(command);
    assert.deepEqual(outcome.status, "denied", command);
    assert.match(
      outcome.content,
      /^denied: "[^"]*touch marker[^"]*" is not in tools\.shell\.allow$/,
      command,
    );
    assert.equal(await exists("marker"), false, `${command} created the marker`);
  }
  const exact = await run("echo ok; touch marker");
  assert.equal(exact.content, `denied: "touch marker" is not in tools.shell.allow`);
});

test("shell: file redirections are denied and create nothing", async () => {
  const { run, exists } = await setup({ allow: ["echo *"] });
  for (
    const command of [
      "echo hi > marker",
      "echo hi >> marker",
      "echo hi &> marker",
      "echo hi >| marker",
      "echo hi 2> marker",
    ]
  ) {
    const outcome = await run(command);
    assert.equal(outcome.status, "denied", command);
    assert.match(outcome.content, /^denied: ".*" redirects to or from a file/, command);
    assert.equal(await exists("marker"), false, `${command} created the marker`);
  }
  const devNull = await run("echo hidden > /dev/null 2>&1; echo shown");
  assert.deepEqual(devNull, { status: "ok", content: "shown\n" });
});

test("shell: deny wins over allow and a denied push never runs", async () => {
  const { run, exists } = await setup({ allow: ["git *", "touch *"], deny: ["git push *", "touch marker"] });
  assert.deepEqual(await run("git push origin main"), {
    status: "denied",
    content: `denied: "git push origin main" matches tools.shell.deny`,
  });
  assert.equal((await run("git status; touch marker")).status, "denied");
  assert.equal(await exists("marker"), false);
});

test("shell: deny-only rules catch wrapped commands", async () => {
  const { run, exists } = await setup({ deny: ["touch *"] });
  for (
    const command of [
      "bash -c 'touch marker'",
      "env touch marker",
      "echo marker | xargs touch",
      "nice touch marker",
      "echo 'touch marker' | sh",
      "/usr/bin/touch marker",
    ]
  ) {
    assert.equal((await run(command)).status, "denied", command);
    assert.equal(await exists("marker"), false, `${command} created the marker`);
  }
  assert.deepEqual(await run("echo allowed"), { status: "ok", content: "allowed\n" });
});

test("shell: allowed commands run with quoting intact", async () => {
  const { run } = await setup({ allow: ["echo *", "git *", "grep *"] });
  assert.deepEqual(await run("echo hi"), { status: "ok", content: "hi\n" });
  assert.deepEqual(await run("echo 'a;b' \"c && d\""), { status: "ok", content: "a;b c && d\n" });
  assert.deepEqual(await run("echo one; echo two | grep two"), { status: "ok", content: "one\ntwo\n" });
  const git = await run("git --version");
  assert.equal(git.status, "ok");
  assert.match(git.content, /^git version \d/);
});

for (const mode of ["sandboxed", "off"] as const) {
  test(`shell (${mode}): env is exactly the context env and cwd is the configured directory`, async () => {
    const { dir, run } = await setup(mode === "off" ? { sandbox: "off" } : {});
    await Deno.mkdir(`${dir}/sub`);
    const env = await run("env");
    assert.equal(env.status, "ok");
    const names = env.content.trim().split("\n").map((line) => line.slice(0, line.indexOf("=")));
    // bash itself adds PWD, SHLVL and _; the git settings of git_env.ts are added to every command.
    const added = (n: string) =>
      ["PWD", "SHLVL", "_", "OLDPWD", "GIT_TERMINAL_PROMPT"].includes(n) ||
      n.startsWith("GIT_CONFIG_");
    assert.deepEqual(names.filter((n) => !added(n)).sort(), ["HERMES_TEST_VALUE", "PATH"]);
    assert.match(env.content, /^GIT_CONFIG_NOSYSTEM=1$/m);
    assert.equal((await run("pwd")).content, `${dir}\n`);
    const sandbox = mode === "off" ? "off" : sandboxIn(dir);
    const sub = shellTool({ cwd: `${dir}/sub`, timeoutMs: 30_000, maxOutput: 1024, sandbox });
    const context = {
      session_id: "s",
      job_dir: dir,
      env: ENV,
      host_env: ENV,
      signal: new AbortController().signal,
    };
    assert.equal((await callTool(sub, { command: "pwd" }, context)).content, `${dir}/sub\n`);
    const missing = shellTool({ cwd: `${dir}/nope`, timeoutMs: 30_000, maxOutput: 1024, sandbox });
    const outcome = await callTool(missing, { command: "pwd" }, context);
    assert.equal(outcome.status, "error");
    assert.match(outcome.content, /not a directory/);
  });
}

test("shell: a non-zero exit is an error that carries the exit code and output", async () => {
  const { run } = await setup();
  assert.deepEqual(await run("echo out; echo err >&2; exit 3"), {
    status: "error",
    content: "exit code 3\nout\nerr\n",
  });
  assert.deepEqual(await run("false"), { status: "error", content: "exit code 1" });
  assert.deepEqual(await run("true"), { status: "ok", content: "(no output)" });
});

test("shell: output is capped with a note", async () => {
  const { run } = await setup({ maxOutput: 1000 });
  const outcome = await run("seq 1 5000");
  assert.equal(outcome.status, "ok");
  assert.ok(outcome.content.endsWith("\n[output truncated at 1000 bytes]"), outcome.content.slice(-80));
  assert.equal(outcome.content.length, 1000 + "\n[output truncated at 1000 bytes]".length);
  assert.ok(outcome.content.startsWith("1\n2\n3\n"));
});

for (const mode of ["sandboxed", "off"] as const) {
  test(`shell (${mode}): a timeout kills the command and what it started`, async () => {
    const { run } = await setup({ timeoutMs: 1000, ...(mode === "off" ? { sandbox: "off" as const } : {}) });
    const started = performance.now();
    const outcome = await run("echo started; sleep 5; echo finished");
    const elapsed = performance.now() - started;
    assert.equal(outcome.status, "error");
    assert.equal(outcome.content, "timed out after 1s (killed)\nstarted\n");
    assert.ok(elapsed < 4000, `took ${elapsed} ms`);
  });
}

test("shell (off): background processes in the command's group do not outlive it", async () => {
  const { run } = await setup({ timeoutMs: 20_000, sandbox: "off" });
  const marker = String(800_000 + Math.floor(Math.random() * 99_999));
  const started = performance.now();
  const outcome = await run(`sleep ${marker} & echo $!`);
  assert.equal(outcome.status, "ok");
  assert.ok(performance.now() - started < 15_000);
  assert.ok(Number(outcome.content.trim()) > 0, outcome.content);
  // Matched by its unique argument, not its pid, which a busy machine may already have reused.
  assert.deepEqual(hostSleeps(marker), []);
});

test("shell: nothing the command started outlives it, setsid and detached children included", async () => {
  const { run } = await setup({ timeoutMs: 20_000 });
  const marker = String(900_000 + Math.floor(Math.random() * 99_999));
  const outcome = await run(
    `sleep ${marker} & setsid sleep ${marker} > /dev/null 2>&1 < /dev/null & ` +
      `(setsid nohup sleep ${marker} > /dev/null 2>&1 &) ; echo started`,
  );
  assert.deepEqual(outcome, { status: "ok", content: "started\n" });
  // The kernel tears the PID namespace down right after bwrap exits; wait for that, then look.
  await settle(() => hostSleeps(marker).length === 0);
  assert.deepEqual(hostSleeps(marker), []);
});

test("shell: a timeout also ends setsid children", async () => {
  const { run } = await setup({ timeoutMs: 1000 });
  const marker = String(900_000 + Math.floor(Math.random() * 99_999));
  const outcome = await run(`setsid sleep ${marker} > /dev/null 2>&1 < /dev/null & sleep ${marker}`);
  assert.match(outcome.content, /^timed out after 1s \(killed\)/);
  await settle(() => hostSleeps(marker).length === 0);
  assert.deepEqual(hostSleeps(marker), []);
});

test("shell: aborting the signal kills the command", async () => {
  const { run } = await setup();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 200);
  const started = performance.now();
  const outcome = await run("sleep 5", controller.signal);
  clearTimeout(timer);
  assert.equal(outcome.status, "error");
  assert.match(outcome.content, /^cancelled/);
  assert.ok(performance.now() - started < 4000);
});

test("shell: invalid arguments are errors, not runs", async () => {
  const { tool, dir } = await setup();
  const context = {
    session_id: "s",
    job_dir: dir,
    env: ENV,
    host_env: ENV,
    signal: new AbortController().signal,
  };
  for (const args of [{}, { command: 3 }, { command: "  " }]) {
    const outcome = await callTool(tool, args, context);
    assert.equal(outcome.status, "error");
    assert.match(outcome.content, /"command" must be a non-empty string/);
  }
});

/** Polls until `done()` holds (the kernel reaps a namespace asynchronously); the assertion follows. */
async function settle(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

/** Host processes running exactly `sleep <seconds>`, by pid. */
function hostSleeps(seconds: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (argv[0]?.endsWith("sleep") && argv[1] === seconds) found.push(Number(entry.name));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

test("shell: deny sees through git's global options and push's other names; allowed git runs", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-git-" }));
  const repo = `${base}/repo`;
  const git = async (args: string[], cwd = base) => {
    const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout);
  };
  await git(["init", "-q", "--bare", "remote.git"]);
  await git(["init", "-q", "-b", "main", "repo"]);
  await Deno.writeTextFile(`${repo}/a.txt`, "a\n");
  await git(["add", "a.txt"], repo);
  await git(["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first"], repo);
  await git(["remote", "add", "origin", "../remote.git"], repo);
  const execPath = (await git(["--exec-path"])).trim();
  const options = { cwd: repo, timeoutMs: 30_000, maxOutput: 64 * 1024, sandbox: sandboxIn(base) };
  const guarded = shellTool({ ...options, allow: ["git *"], deny: ["git push *"] });
  const context: ToolContext = {
    session_id: "s",
    job_dir: repo,
    env: ENV,
    host_env: ENV,
    signal: new AbortController().signal,
  };
  const run = (tool: typeof guarded, command: string) => callTool(tool, { command }, context);
  const remoteRefs = () => git(["for-each-ref"], `${base}/remote.git`);

  for (
    const command of [
      "git push origin main",
      "git -C . push origin main",
      "git -c k=v push origin main",
      "git --no-pager push origin main",
      "git -P push origin main",
      "git --git-dir=.git --work-tree=. push origin main",
      `git --exec-path=${execPath} push origin main`,
      "git send-pack ../remote.git main",
      "git -c alias.p=push p origin main",
      "git -c 'alias.p=!git push origin main' p",
      `${execPath}/git-push origin main`,
    ]
  ) {
    const outcome = await run(guarded, command);
    assert.equal(outcome.status, "denied", `${command}: ${outcome.content}`);
  }
  assert.equal(await remoteRefs(), "", "nothing was pushed");
  assert.equal((await run(guarded, "git status --short")).status, "ok");
  const log = await run(guarded, "git -C . log --oneline");
  assert.equal(log.status, "ok");
  assert.match(log.content, /first/);
  // The same push without the deny pattern does push: the denials above are what stopped it.
  const open = shellTool({ ...options, allow: ["git *"] });
  const pushed = await run(open, "git -C . push -q origin main");
  assert.equal(pushed.status, "ok", pushed.content);
  assert.match(await remoteRefs(), /refs\/heads\/main/);
  await Deno.remove(base, { recursive: true });
});
