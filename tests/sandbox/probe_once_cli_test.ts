/**
 * One sandbox probe per session: a `hermes run` whose model makes many shell, read_file and write_file calls
 * over several steps probes bubblewrap once (the session's probe), whatever number of calls use it. The
 * probe is counted where it is observable: every probe asks bwrap for `--version`, no command does.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { probeSandbox } from "../../runtime/sandbox/probe.ts";

Deno.test({
  name: "sandbox (CLI): a session with many shell and file calls probes the sandbox once",
  ignore: withoutSandbox,
}, async () => {
  const real = await probeSandbox({ path: Deno.env.get("PATH") ?? "" });
  if (!real.ok) throw new Error(real.reason);
  const dir = await tempDir("hermes-probe-once-");
  try {
    const calls = [0, 1, 2].flatMap((i) => [
      `- tool_calls: [{ name: shell, arguments: { command: "echo shell ${i}" } }]`,
      `- tool_calls: [{ name: write_file, arguments: { path: out/f${i}.txt, content: "file ${i}" } },` +
      ` { name: read_file, arguments: { path: out/f${i}.txt } }, { name: shell, arguments: { command: "cat out/f${i}.txt" } }]`,
    ]);
    await writeFiles(dir, {
      "job.yaml": `name: probe-once
model: { provider: scripted, script: ./r.yaml }
prompt: go
tools: { shell: {}, read_file: { paths: [./out] }, write_file: { paths: [./out] } }
`,
      "r.yaml": [...calls, "- content: done", ""].join("\n"),
      "bwrap": `#!/bin/sh\n[ "$1" = --version ] && echo probe >> ${
        join(dir, "probes")
      }\nexec ${real.path} "$@"\n`,
      "out/.keep": "",
    });
    await Deno.chmod(join(dir, "bwrap"), 0o755);
    const { code, stderr, events } = await runEvents(dir, { env: { HERMES_BWRAP: join(dir, "bwrap") } });
    assert.equal(code, 0, stderr);
    const results = events.filter((e) => e.type === "tool.result");
    assert.equal(results.length, 12);
    assert.deepEqual(results.filter((e) => e.status !== "ok"), []);
    assert.deepEqual(results.filter((e) => e.tool === "shell").map((e) => e.content), [
      "shell 0\n",
      "file 0",
      "shell 1\n",
      "file 1",
      "shell 2\n",
      "file 2",
    ]);
    const probes = (await Deno.readTextFile(join(dir, "probes"))).split("\n").filter(Boolean);
    assert.equal(probes.length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
