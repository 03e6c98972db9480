/** `hermes run` flags peers' users expect: --max-turns, --timeout, and for one-shot -p runs --tools and --allow. */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const READ_REPLIES = `- tool_calls: [{ name: read_file, arguments: { path: README.md } }]
- content: It says hello.
`;

/** A directory that is the home (config.yaml picks the scripted model), the cwd and the one-shot job dir. */
async function oneShotDir(replies: string, config = ""): Promise<string> {
  const dir = await tempDir();
  return await writeFiles(dir, {
    "README.md": "hello from the readme\n",
    "r.yaml": replies,
    "config.yaml": `model: { provider: scripted, script: ${dir}/r.yaml }\n${config}`,
  });
}

function events(stdout: string): Record<string, unknown>[] {
  return stdout.trim().split("\n").map((line) => JSON.parse(line));
}

async function run(dir: string, args: string[]) {
  return await hermes(["run", "--output", "stream-json", ...args], { cwd: dir, home: dir });
}

Deno.test("run -p --tools read_file,list_dir offers those tools rooted at the current directory", async () => {
  const dir = await oneShotDir(READ_REPLIES);
  const withTools = await run(dir, ["-p", "summarise README.md", "--tools", "read_file,list_dir"]);
  assert.equal(withTools.code, 0, withTools.stderr);
  const result = events(withTools.stdout).find((e) => e.type === "tool.result")!;
  assert.equal(result.status, "ok");
  assert.match(String(result.content), /hello from the readme/);
  // Without --tools a one-shot run still offers nothing: the call is not executed.
  const without = await run(dir, ["-p", "summarise README.md"]);
  const refused = events(without.stdout).find((e) => e.type === "tool.result");
  assert.notEqual(refused?.status, "ok");
  assert.doesNotMatch(String(refused?.content), /hello from the readme/);
  // A path outside the current directory stays refused.
  const outside = await oneShotDir(
    `- tool_calls: [{ name: read_file, arguments: { path: /etc/passwd } }]\n- content: x\n`,
  );
  const escaped = await run(outside, ["-p", "read it", "--tools", "read_file"]);
  const denied = events(escaped.stdout).find((e) => e.type === "tool.result")!;
  assert.notEqual(denied.status, "ok");
});

Deno.test({
  name: "run -p --allow PATTERN offers shell with that pattern only (repeatable)",
  ignore: withoutSandbox,
}, async () => {
  const dir = await oneShotDir(`- tool_calls:
    - { name: shell, arguments: { command: "echo allowed" } }
    - { name: shell, arguments: { command: "pwd" } }
    - { name: shell, arguments: { command: "touch nope" } }
- content: done
`);
  const { code, stdout, stderr } = await run(dir, ["-p", "go", "--allow", "echo *", "--allow", "pwd"]);
  assert.equal(code, 0, stderr);
  const results = events(stdout).filter((e) => e.type === "tool.result");
  assert.deepEqual(results.map((e) => e.status), ["ok", "ok", "denied"]);
  assert.match(String(results[0]!.content), /allowed/);
  assert.match(String(results[1]!.content), new RegExp(dir.split("/").pop()!));
  assert.equal(await Deno.stat(`${dir}/nope`).then(() => true, () => false), false);
});

Deno.test("run --max-turns and --timeout override the job's and config.yaml's limits", async () => {
  const replies = READ_REPLIES;
  const dir = await oneShotDir(replies, "limits: { max_turns: 1 }\n");
  const fromConfig = await run(dir, ["-p", "x", "--tools", "read_file"]);
  assert.equal(fromConfig.code, 3);
  assert.equal(events(fromConfig.stdout).at(-1)!.terminal_reason, "max_turns");
  const raised = await run(dir, ["-p", "x", "--tools", "read_file", "--max-turns", "5", "--timeout", "5m"]);
  assert.equal(raised.code, 0, raised.stderr);
  await writeFiles(dir, {
    "job.yaml": `name: j\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: x\n` +
      `tools: { read_file: {} }\nlimits: { max_turns: 5 }\n`,
  });
  const fromJob = await run(dir, ["job.yaml"]);
  assert.equal(fromJob.code, 0, fromJob.stderr);
  const lowered = await run(dir, ["job.yaml", "--max-turns", "1"]);
  assert.equal(lowered.code, 3);
  assert.equal(events(lowered.stdout).at(-1)!.terminal_reason, "max_turns");
});

Deno.test("run: invalid --max-turns, --timeout, --tools and --allow are exit 2 before any model call", async () => {
  const dir = await oneShotDir("- content: should not be used\n");
  await writeFiles(dir, {
    "job.yaml": `name: j\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: x\n`,
  });
  const cases: [string[], RegExp][] = [
    [["-p", "x", "--max-turns", "0"], /invalid --max-turns "0"/],
    [["-p", "x", "--max-turns", "two"], /invalid --max-turns "two"/],
    [["-p", "x", "--timeout", "30"], /invalid --timeout "30": expected a duration/],
    [["-p", "x", "--timeout", "soon"], /invalid --timeout "soon"/],
    [["-p", "x", "--tools", "read_fle"], /unknown tool "read_fle" in --tools \(did you mean "read_file"\?\)/],
    [["-p", "x", "--tools", "http_fetch"], /needs a hosts list/],
    [["-p", "x", "--tools", "shell"], /--tools shell needs --allow/],
    [["job.yaml", "--tools", "read_file"], /--tools and --allow go with a one-shot -p run/],
  ];
  for (const [args, message] of cases) {
    const { code, stdout, stderr } = await hermes(["run", ...args], { cwd: dir, home: dir });
    assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
    assert.equal(stdout, "");
    assert.match(stderr, message);
    assert.match(stderr, /^hermes run: /);
  }
  const sessions = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
  assert.deepEqual(JSON.parse(sessions.stdout || "[]"), []);
});
