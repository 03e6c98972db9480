/** The shell tool's OS sandbox through `hermes run`: probed before any model call, marked when off. */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "./_cli.ts";
import { sandboxTests } from "../runtime/sandbox/_testing.ts";

const { ignore } = await sandboxTests("sandbox run tests");

function job(sandbox: string): string {
  return `name: sandboxed
model: { provider: scripted, script: ./replies.yaml }
prompt: Look around.
tools:
  shell: { allow: ["cat *", "echo *"]${sandbox} }
`;
}
const REPLIES = `- tool_calls: [{ name: shell, arguments: { command: "cat state.db; echo listed" } }]
- content: Looked.
`;

Deno.test(
  { name: "run: the shell tool runs sandboxed by default and cannot read the store", ignore },
  async () => {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(""), "replies.yaml": REPLIES });
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const result = events.at(-1)!;
    assert.equal(result.type, "result");
    assert.equal("sandbox" in result, false);
    const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
    assert.match(output, /listed/);
    assert.match(output, /state\.db: (No such file or directory|Permission denied)/, "the store is hidden");
    assert.equal(events.some((e) => e.type === "sandbox"), false);
  },
);

Deno.test(
  { name: "run: sandbox: off warns on stderr, emits a sandbox event and marks the result", ignore },
  async () => {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": job(", sandbox: off"),
      "replies.yaml": REPLIES,
    });
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /tools\.shell\.sandbox is off/);
    assert.deepEqual(events.find((e) => e.type === "sandbox")?.mode, "off");
    assert.equal(events.at(-1)!.sandbox, "off");
  },
);

Deno.test("run: a shell job on a machine without a working sandbox is exit 2 before any model call", async () => {
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(""), "replies.yaml": REPLIES });
  const r = await hermes(["run", "job.yaml", "--output", "json"], {
    cwd: dir,
    home: dir,
    env: { HERMES_BWRAP: `${dir}/no-bwrap-here` },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^hermes: Cannot run the shell tool in its OS sandbox: .*sandbox: off/);
  assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
  assert.equal(r.stdout, "");
  const list = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
  assert.deepEqual(JSON.parse(list.stdout), [], "nothing was stored");
  // The explicit opt-out still runs there.
  await Deno.writeTextFile(`${dir}/job.yaml`, job(", sandbox: off"));
  const off = await hermes(["run", "job.yaml", "--output", "json"], {
    cwd: dir,
    home: dir,
    env: { HERMES_BWRAP: `${dir}/no-bwrap-here` },
  });
  assert.equal(off.code, 0, off.stderr);
  assert.equal(JSON.parse(off.stdout).sandbox, "off");
});
