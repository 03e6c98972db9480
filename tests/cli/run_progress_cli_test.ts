/** `hermes run` progress on stderr: a live status line on a terminal, plain lines otherwise or in CI. */
import assert from "node:assert/strict";
import { canFakeTerminal } from "../../commands/sessions/_testing.ts";
import { hermes, MAIN, ROOT, tempDir, writeFiles } from "../_testing/cli.ts";

async function jobDir(): Promise<string> {
  return await writeFiles(await tempDir(), {
    "job.yaml": "name: progress\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: look around\n" +
      "tools: { list_dir: {} }\n",
    "r.yaml": "- tool_calls: [{ name: list_dir, arguments: { path: . } }]\n- content: FINAL-ANSWER\n",
  });
}

/** The CLI on a pseudo-terminal (stderr and stdout both reach it), with exactly `env` added. */
async function onTerminal(dir: string, env: Record<string, string>) {
  const command = [Deno.execPath(), "run", "-A", MAIN, "--home", dir, "run", `${dir}/job.yaml`].join(" ");
  const { code, stdout } = await new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    cwd: ROOT,
    clearEnv: true,
    env: { ...inherited(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code, out: new TextDecoder().decode(stdout) };
}

/** This environment without the variables under test (the Deno cache location is kept). */
function inherited(): Record<string, string> {
  const { NO_COLOR: _color, CI: _ci, GITHUB_ACTIONS: _gha, ...rest } = Deno.env.toObject();
  return rest;
}

const CLEAR_LINE = "\r\x1b[2K";
const ESC = String.fromCharCode(27);
/** An SGR (color) sequence; the line-clearing `ESC[2K` is not one. */
const COLOR = new RegExp(`${ESC}\\[[0-9;]*m`);
const COLOR_ALL = new RegExp(COLOR.source, "g");

Deno.test({
  name: "on a terminal, run shows a status line (turn, waiting on the model) and one line per tool call",
  ignore: !canFakeTerminal(),
  fn: async () => {
    const dir = await jobDir();
    const colored = await onTerminal(dir, {});
    assert.equal(colored.code, 0, colored.out);
    assert.ok(colored.out.includes(CLEAR_LINE), "the status line is redrawn in place");
    assert.match(colored.out, /hermes: turn 1 · waiting on the model \d+\.\ds/);
    assert.match(colored.out, /hermes: turn 2 · waiting on the model/);
    assert.ok(colored.out.replace(COLOR_ALL, "").includes('list_dir {"path":"."}'), "one line per tool call");
    assert.match(colored.out, COLOR);
    assert.match(colored.out, /FINAL-ANSWER/);
    // The status line is cleared at the end: the answer is the last thing left on the screen.
    assert.ok(colored.out.lastIndexOf(CLEAR_LINE) < colored.out.indexOf("FINAL-ANSWER"));

    const plain = await onTerminal(dir, { NO_COLOR: "1" });
    assert.equal(plain.code, 0);
    assert.match(plain.out, /hermes: turn 1 · waiting on the model/);
    assert.doesNotMatch(plain.out, COLOR, "NO_COLOR: no colors, the status line stays");

    const ci = await onTerminal(dir, { CI: "true" });
    assert.equal(ci.code, 0);
    assert.ok(!ci.out.includes(CLEAR_LINE), "CI=true: no redrawn line");
    assert.doesNotMatch(ci.out, /waiting on the model/);
    assert.match(ci.out, /hermes info: tool list_dir \{"path":"\."\}/);
  },
});

Deno.test("without a terminal, progress is plain lines on stderr and stdout is only the answer", async () => {
  const dir = await jobDir();
  const { code, stdout, stderr } = await hermes(["run", "job.yaml"], { cwd: dir, home: dir, env: {} });
  assert.equal(code, 0, stderr);
  assert.equal(stdout, "FINAL-ANSWER\n");
  assert.match(stderr, /^hermes info: tool list_dir \{"path":"\."\}$/m);
  assert.ok(!stderr.includes("\x1b"), "no escape codes when stderr is not a terminal");
  const quiet = await hermes(["run", "job.yaml", "--quiet"], { cwd: dir, home: dir });
  assert.equal(quiet.stderr, "");
});

Deno.test("a CI log of a 5-tool-round run has every tool result line, each turn, and the final status", async () => {
  const round = (path: string) => `- tool_calls: [{ name: read_file, arguments: { path: ${path} } }]\n`;
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: rounds\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: read them\n" +
      "tools: { read_file: {} }\n",
    "r.yaml": ["a.txt", "b.txt", "c.txt", "missing.txt", "e.txt"].map(round).join("") + "- content: DONE\n",
    "a.txt": "alpha\n",
    "b.txt": "x".repeat(2048),
    "c.txt": "gamma\n",
    "e.txt": "epsilon\n",
  });
  const env = { CI: "true", GITHUB_ACTIONS: "true" };
  const { code, stdout, stderr } = await hermes(["run", "job.yaml"], { cwd: dir, home: dir, env });
  assert.equal(code, 0, stderr);
  assert.equal(stdout, "DONE\n");
  const results = stderr.split("\n").filter((line) => line.startsWith("hermes info: tool read_file → "));
  assert.equal(results.length, 5, stderr);
  assert.match(results[0]!, /^hermes info: tool read_file → ok, 6 B, \d+ ms$/);
  assert.match(results[1]!, /^hermes info: tool read_file → ok, 2\.0 KiB, \d+ ms$/);
  assert.match(results[3]!, /^hermes info: tool read_file → error, \d+ B, \d+ ms: .*missing\.txt/);
  assert.equal(stderr.match(/^hermes info: turn \d+ done: /gm)?.length, 6, "one line per model turn");
  assert.match(
    stderr,
    /^hermes info: success \(completed\), exit 0: 6 turns, \d+ prompt \+ \d+ completion tokens, /m,
  );
  // warn: only what needs attention; debug: also what the tools returned.
  const warn = await hermes(["run", "job.yaml", "--log-level", "warn"], { cwd: dir, home: dir, env });
  assert.equal(warn.code, 0, warn.stderr);
  assert.doesNotMatch(warn.stderr, /hermes info:/);
  const debug = await hermes(["run", "job.yaml", "--log-level", "debug"], { cwd: dir, home: dir, env });
  assert.match(debug.stderr, /^hermes debug: tool read_file result: alpha$/m);
  assert.match(debug.stderr, /^hermes debug: session \S+: job rounds, model scripted$/m);
  assert.equal(
    debug.stderr.split("\n").filter((l) => l.startsWith("hermes info: tool read_file → ")).length,
    5,
  );
});
