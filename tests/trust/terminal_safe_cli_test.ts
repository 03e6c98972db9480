/**
 * Tool output and answers holding escape sequences (OSC 52 clipboard write, title change,
 * screen clear), NUL, CR, BEL, C1 controls and bidirectional overrides never reach a terminal raw:
 * `sessions show`, progress lines and the text answer on a terminal render them visibly, and what follows
 * a NUL is shown. A pipe gets the answer's exact bytes; JSON output is exact (JSON escapes what it must).
 */
import assert from "node:assert/strict";
import { canFakeTerminal } from "../../commands/sessions/_testing.ts";
import { hermes, MAIN, ROOT, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const EVIL = "title\x1b]0;pwned\x07 clip\x1b]52;c;aGk=\x07 clear\x1b[2J\x1bc nul\x00after-nul " +
  "cr\roverwritten c1\u009b31m bidi\u202egnp.exe iso\u2066x\u2069 del\x7f end";
/** What a terminal would act on: C0 controls other than tab and newline, DEL, C1, bidi controls. */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const SHOWN = [
  "title\\x1b]0;pwned\\x07",
  "clip\\x1b]52;c;aGk=\\x07",
  "clear\\x1b[2J\\x1bc",
  "nul\\0after-nul",
  "cr\\roverwritten",
  "c1\\u009b31m",
  "bidi\\u202egnp.exe",
  "iso\\u2066x\\u2069",
  "del\\x7f end",
];

async function project(): Promise<string> {
  const replies = [
    { tool_calls: [{ name: "shell", arguments: { command: "cat evil.txt" } }] },
    { tool_calls: [{ name: "read_file", arguments: { path: `missing\u009b\u202e.txt` } }] },
    { content: `ANSWER ${EVIL}` },
  ];
  return await writeFiles(await tempDir(), {
    "job.yaml": "name: terminal\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: read it\n" +
      'tools: { read_file: {}, shell: { allow: ["cat *"] } }\n',
    "r.yaml": JSON.stringify(replies),
    "evil.txt": EVIL,
  });
}

function assertVisible(text: string, where: string): void {
  const raw = text.match(RAW_CONTROL);
  assert.equal(raw, null, `${where} holds a raw control character U+${raw?.[0].charCodeAt(0).toString(16)}`);
}

Deno.test({
  name: "sessions show renders control characters visibly and hides nothing after a NUL",
  ignore: withoutSandbox,
}, async () => {
  const dir = await project();
  const run = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.final, `ANSWER ${EVIL}`, "JSON output is exact");

  const shown = await hermes(["sessions", "show", result.session_id], { cwd: dir, home: dir });
  assert.equal(shown.code, 0, shown.stderr);
  assertVisible(shown.stdout, "sessions show");
  // A stored NUL is U+FFFD (PostgreSQL text cannot hold NUL, and SQLite's reader would stop at it).
  const stored = SHOWN.map((form) => form.replace("\\0", "\uFFFD"));
  for (const form of stored) {
    // Once in the tool result, once in the answer.
    assert.equal(shown.stdout.split(form).length - 1, 2, `${form} in:\n${shown.stdout}`);
  }
  const json = await hermes(["sessions", "show", result.session_id, "--json"], { cwd: dir, home: dir });
  const transcript = JSON.parse(json.stdout);
  const exact = EVIL.replace("\0", "\uFFFD");
  assert.ok(
    transcript.messages.some((m: { content: string }) => m.content.trim() === exact),
    "--json is exact",
  );
});

Deno.test({
  name: "without a terminal: the text answer keeps its exact bytes; progress lines on stderr are visible",
  ignore: withoutSandbox,
}, async () => {
  const dir = await project();
  const run = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, `ANSWER ${EVIL}\n`, "a pipe gets the bytes the model wrote");
  assertVisible(run.stderr, "stderr");
  assert.match(run.stderr, /tool read_file \{"path":"missing\\u009b\\u202e\.txt"\}/);
});

Deno.test({
  name: "on a terminal: the answer and the progress lines render control characters visibly",
  ignore: !canFakeTerminal() || withoutSandbox,
  fn: async () => {
    const dir = await project();
    const command = [Deno.execPath(), "run", "-A", MAIN, "--home", dir, "run", `${dir}/job.yaml`].join(" ");
    const { CI: _ci, ...env } = Deno.env.toObject();
    const { code, stdout } = await new Deno.Command("script", {
      args: ["-qec", command, "/dev/null"],
      cwd: ROOT,
      clearEnv: true,
      env: { ...env, NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(stdout);
    assert.equal(code, 0, out);
    // The status line's own `\r ESC[2K` is Hermes's; everything quoted from the model or a tool is escaped.
    const ours = out.replaceAll("\r\x1b[2K", "").replaceAll("\r\n", "\n");
    assertVisible(ours, "the terminal");
    assert.ok(ours.includes(`ANSWER ${SHOWN.join(" ")}`), ours);
    // The failed read is shown on its own progress line, its path escaped.
    assert.match(ours, /read_file error: .*missing\\u009b\\u202e\.txt/);

    // A Markdown export to the terminal is escaped too; to a pipe it keeps the bytes.
    const exportCommand = [Deno.execPath(), "run", "-A", MAIN, "--home", dir, "sessions", "export", "latest"]
      .concat(["--format", "md"]).join(" ");
    const exported = await new Deno.Command("script", {
      args: ["-qec", exportCommand, "/dev/null"],
      cwd: ROOT,
      clearEnv: true,
      env: { ...env, NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const md = new TextDecoder().decode(exported.stdout).replaceAll("\r\n", "\n");
    assertVisible(md, "sessions export --format md on a terminal");
    assert.ok(md.includes("clip\\x1b]52;c;aGk=\\x07"), md);
    const piped = await hermes(["sessions", "export", "latest", "--format", "md"], { cwd: dir, home: dir });
    assert.ok(piped.stdout.includes("clip\x1b]52;c;aGk=\x07"), "a pipe gets the exact bytes");
  },
});
