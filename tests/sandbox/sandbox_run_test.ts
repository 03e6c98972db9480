/** The shell tool's OS sandbox through `hermes run`: probed before any model call, marked when off. */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { sandboxTests } from "../../runtime/sandbox/_testing.ts";

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
    assert.equal(events.some((e) => e.type === "sandbox" && e.mode === "off"), false);
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
  const result = JSON.parse(r.stdout);
  assert.deepEqual([result.exit_code, result.terminal_reason, result.session_id], [2, "invalid_input", ""]);
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

const PLUGIN_JOB = (entry: string) =>
  `name: with-plugin
model: { provider: scripted, script: ./replies.yaml }
prompt: Hello.
plugins:
  - { path: ./greeter.js${entry} }
`;
const GREETER = `export function register(ctx) {
  ctx.registerHook("pre_llm_call", () => "greeted");
}`;

Deno.test("run: plugins on a machine without a working sandbox are exit 2 before any model call", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": PLUGIN_JOB(""),
    "greeter.js": GREETER,
    "replies.yaml": "- content: Hi.\n",
  });
  const env = { HERMES_BWRAP: `${dir}/no-bwrap-here` };
  const r = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /^hermes: Cannot start plugin \.\/greeter\.js in its OS sandbox: .*`sandbox: off` on the plugin entry/,
  );
  assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.deepEqual([result.exit_code, result.terminal_reason, result.session_id], [2, "invalid_input", ""]);
  const list = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
  assert.deepEqual(JSON.parse(list.stdout), [], "nothing was stored");
  // The explicit opt-out runs there, warned about and marked.
  await Deno.writeTextFile(`${dir}/job.yaml`, PLUGIN_JOB(", sandbox: off"));
  const off = await runEvents(dir, { env });
  assert.equal(off.code, 0, off.stderr);
  assert.match(
    off.stderr,
    /plugin \.\/greeter\.js has sandbox: off: it runs on this host without the OS sandbox/,
  );
  assert.equal(off.events.find((e) => e.type === "sandbox")?.reason, "plugin ./greeter.js has sandbox: off");
  assert.equal(off.events.at(-1)!.sandbox, "off");
});

Deno.test({ name: "run: a sandboxed plugin runs and the result is not marked", ignore }, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": PLUGIN_JOB(""),
    "greeter.js": GREETER,
    "replies.yaml": "- content: Hi.\n",
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(events.at(-1)!.status, "success");
  assert.equal("sandbox" in events.at(-1)!, false);
  assert.equal(events.some((e) => e.type === "sandbox" && e.mode === "off"), false);
  assert.equal(stderr.includes("sandbox: off"), false);
});
