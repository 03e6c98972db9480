/** Malformed YAML (job files, scripted replies) through the real CLI: one located line, exit 2, nothing run. */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";

const isOneLine = (stderr: string) =>
  stderr.trimEnd().split("\n").length === 1 && !/internal error/.test(stderr);

function bomb(levels: number): string {
  const rows = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i <= levels; i++) rows.push(`l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(", ")}]`);
  return `name: bomb\nprompt: hi\nx:\n${rows.map((r) => `  ${r}`).join("\n")}\n`;
}

Deno.test("validate: YAML syntax and alias errors are exit 2 with file:line:col", async () => {
  const dir = await writeFiles(await tempDir(), {
    "syntax.yaml": "name: s\nprompt: hi\nsteps: [a, b\n",
    "alias.yaml": "name: a\nprompt: *greeting\n",
    "bomb.yaml": bomb(6),
    "ok.yaml": "name: ok\nsystem: &terse Be terse.\nprompt: *terse\n",
  });
  for (
    const [file, expected] of [
      ["syntax.yaml", /^hermes: syntax\.yaml:4:1: invalid YAML: Flow sequence/],
      ["alias.yaml", /^hermes: alias\.yaml:2:9: invalid YAML: alias \*greeting has no anchor/],
      ["bomb.yaml", /^hermes: bomb\.yaml:5:\d+: invalid YAML: aliases expand to more than 100 nodes/],
    ] as const
  ) {
    const r = await hermes(["validate", file], { cwd: dir, home: dir });
    assert.equal(r.code, 2, `${file}: ${r.stderr}`);
    assert.match(r.stderr, expected);
    assert.ok(isOneLine(r.stderr), r.stderr);
  }
  const ok = await hermes(["validate", "ok.yaml"], { cwd: dir, home: dir });
  assert.equal(ok.code, 0, ok.stderr);
});

Deno.test("run: a malformed scripted replies file is exit 2 naming the replies file's line, and stores nothing", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: j\nmodel: { provider: scripted, script: ./replies.yaml }\nprompt: hi\n",
    "replies.yaml": "- content: fine\n- content: 5\n",
  });
  const r = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /replies\.yaml:2:12: \[1\]\.content: .*expected string/);
  assert.ok(isOneLine(r.stderr), r.stderr);
  const list = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
  assert.deepEqual(JSON.parse(list.stdout), []);
  await Deno.writeTextFile(`${dir}/replies.yaml`, "- content: fine\n");
  const fixed = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.equal(fixed.stdout.trim(), "fine");
});
