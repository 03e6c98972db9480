import assert from "node:assert/strict";
import { shellTool, type ShellToolOptions } from "./shell.ts";
import type { ToolContext } from "./tool.ts";
import { exists as pathExists } from "../core/fs.ts";

const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", HERMES_TEST_VALUE: "from-context" };

async function setup(options: Partial<ShellToolOptions> = {}) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-" }));
  const tool = shellTool({ cwd: dir, timeoutMs: 30_000, maxOutput: 64 * 1024, ...options });
  const context = (signal = new AbortController().signal): ToolContext => ({
    session_id: "s1",
    job_dir: dir,
    env: ENV,
    signal,
  });
  const run = (command: string, signal?: AbortSignal) => tool.run({ command }, context(signal));
  const exists = (name: string) => pathExists(`${dir}/${name}`);
  return { dir, tool, run, exists };
}

Deno.test("shell: the spec is the contract's `shell {command}`", async () => {
  const { tool } = await setup({ allow: ["git *"] });
  assert.equal(tool.spec.name, "shell");
  assert.deepEqual((tool.spec.parameters as { required: string[] }).required, ["command"]);
  assert.match(tool.spec.description, /Allowed commands: git \*/);
});

Deno.test("shell: every smuggling form is denied and never executed", async () => {
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

Deno.test("shell: file redirections are denied and create nothing", async () => {
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

Deno.test("shell: deny wins over allow and a denied push never runs", async () => {
  const { run, exists } = await setup({ allow: ["git *", "touch *"], deny: ["git push *", "touch marker"] });
  assert.deepEqual(await run("git push origin main"), {
    status: "denied",
    content: `denied: "git push origin main" matches tools.shell.deny`,
  });
  assert.equal((await run("git status; touch marker")).status, "denied");
  assert.equal(await exists("marker"), false);
});

Deno.test("shell: deny-only rules catch wrapped commands", async () => {
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

Deno.test("shell: allowed commands run with quoting intact", async () => {
  const { run } = await setup({ allow: ["echo *", "git *", "grep *"] });
  assert.deepEqual(await run("echo hi"), { status: "ok", content: "hi\n" });
  assert.deepEqual(await run("echo 'a;b' \"c && d\""), { status: "ok", content: "a;b c && d\n" });
  assert.deepEqual(await run("echo one; echo two | grep two"), { status: "ok", content: "one\ntwo\n" });
  const git = await run("git --version");
  assert.equal(git.status, "ok");
  assert.match(git.content, /^git version \d/);
});

Deno.test("shell: env is exactly the context env and cwd is the configured directory", async () => {
  const { dir, run } = await setup();
  await Deno.mkdir(`${dir}/sub`);
  const env = await run("env");
  assert.equal(env.status, "ok");
  const names = env.content.trim().split("\n").map((line) => line.slice(0, line.indexOf("=")));
  // bash itself adds PWD, SHLVL and _.
  assert.deepEqual(names.filter((n) => !["PWD", "SHLVL", "_", "OLDPWD"].includes(n)).sort(), [
    "HERMES_TEST_VALUE",
    "PATH",
  ]);
  assert.equal((await run("pwd")).content, `${dir}\n`);
  const sub = shellTool({ cwd: `${dir}/sub`, timeoutMs: 30_000, maxOutput: 1024 });
  const context = { session_id: "s", job_dir: dir, env: ENV, signal: new AbortController().signal };
  assert.equal((await sub.run({ command: "pwd" }, context)).content, `${dir}/sub\n`);
  const missing = shellTool({ cwd: `${dir}/nope`, timeoutMs: 30_000, maxOutput: 1024 });
  const outcome = await missing.run({ command: "pwd" }, context);
  assert.equal(outcome.status, "error");
  assert.match(outcome.content, /not a directory/);
});

Deno.test("shell: a non-zero exit is an error that carries the exit code and output", async () => {
  const { run } = await setup();
  assert.deepEqual(await run("echo out; echo err >&2; exit 3"), {
    status: "error",
    content: "exit code 3\nout\nerr\n",
  });
  assert.deepEqual(await run("false"), { status: "error", content: "exit code 1" });
  assert.deepEqual(await run("true"), { status: "ok", content: "(no output)" });
});

Deno.test("shell: output is capped with a note", async () => {
  const { run } = await setup({ maxOutput: 1000 });
  const outcome = await run("seq 1 5000");
  assert.equal(outcome.status, "ok");
  assert.ok(outcome.content.endsWith("\n[output truncated at 1000 bytes]"), outcome.content.slice(-80));
  assert.equal(outcome.content.length, 1000 + "\n[output truncated at 1000 bytes]".length);
  assert.ok(outcome.content.startsWith("1\n2\n3\n"));
});

Deno.test("shell: a timeout kills the whole process group", async () => {
  const { run } = await setup({ timeoutMs: 1000 });
  const started = performance.now();
  const outcome = await run("echo started; sleep 5; echo finished");
  const elapsed = performance.now() - started;
  assert.equal(outcome.status, "error");
  assert.equal(outcome.content, "timed out after 1s (killed)\nstarted\n");
  assert.ok(elapsed < 4000, `took ${elapsed} ms`);
});

Deno.test("shell: background processes do not outlive the command", async () => {
  const { run } = await setup({ timeoutMs: 20_000 });
  const started = performance.now();
  const outcome = await run("sleep 30 & echo $!");
  assert.equal(outcome.status, "ok");
  assert.ok(performance.now() - started < 15_000);
  const pid = Number(outcome.content.trim());
  assert.ok(pid > 0, outcome.content);
  assert.equal(await processState(pid), "gone or zombie");
});

Deno.test("shell: aborting the signal kills the command", async () => {
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

Deno.test("shell: invalid arguments are errors, not runs", async () => {
  const { tool, dir } = await setup();
  const context = { session_id: "s", job_dir: dir, env: ENV, signal: new AbortController().signal };
  for (const args of [{}, { command: 3 }, { command: "  " }]) {
    const outcome = await tool.run(args, context);
    assert.equal(outcome.status, "error");
    assert.match(outcome.content, /"command" must be a non-empty string/);
  }
});

async function processState(pid: number): Promise<string> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X" ? "gone or zombie" : `running (${state})`;
  } catch {
    return "gone or zombie";
  }
}
