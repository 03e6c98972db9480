import assert from "node:assert/strict";
import { hermes, ROOT, tempDir, writeFiles } from "../tests/_testing/cli.ts";
import { referenceServers } from "../runtime/mcp/_testing.ts";
import { withoutSandbox } from "../tests/_testing/sandbox.ts";

Deno.test({
  name: "hermes mcp list: each server, whether it starts, its tools offered or filtered; --json",
  ignore: withoutSandbox,
}, async () => {
  const { everything } = await referenceServers();
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: list
prompt: hi
mcp_servers:
  everything: { command: ${everything}, tools: { allow: ["echo", "get-*"], deny: ["get-env"] } }
  mute: { command: node, args: ["${ROOT}/runtime/mcp/testdata/silent_server.mjs"], startup_timeout: 1s }
`,
  });
  const text = await hermes(["mcp", "list", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /✓ everything \(stdio\) started in \d+ ms/);
  assert.match(text.stdout, /^ {2}tool mcp__everything__echo$/m);
  assert.match(text.stdout, /^ {2}filtered mcp__everything__get-env — denied by tools\.deny "get-env"$/m);
  assert.match(
    text.stdout,
    /^ {2}filtered mcp__everything__toggle-simulated-logging — not in tools\.allow$/m,
  );
  assert.match(text.stdout, /✗ mute \(stdio\)\n {2}error: it did not answer initialize within 1s/);

  const json = await hermes(["mcp", "list", "job.yaml", "--json"], { cwd: dir, home: dir });
  assert.equal(json.code, 0, json.stderr);
  const [ok, mute] = JSON.parse(json.stdout);
  assert.equal(ok.started, true);
  assert.deepEqual(ok.tools.find((t: { name: string }) => t.name === "get-sum"), {
    name: "get-sum",
    exposed: "mcp__everything__get-sum",
    offered: true,
    reason: null,
  });
  assert.deepEqual([mute.name, mute.started, mute.tools], ["mute", false, []]);

  // A required server that does not start is exit 2.
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    (await Deno.readTextFile(`${dir}/job.yaml`)).replace(
      "startup_timeout: 1s",
      "startup_timeout: 1s, required: true",
    ),
  );
  const refused = await hermes(["mcp", "list", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(refused.code, 2);
  assert.match(refused.stdout, /✗ mute \(stdio, required\)/);
});

Deno.test("hermes mcp list without a job lists config.yaml's servers; a job adds to them by name", async () => {
  const { everything } = await referenceServers();
  const dir = await writeFiles(await tempDir(), {
    "config.yaml": `mcp_servers:\n  global: { command: ${everything}, tools: { allow: [echo] } }\n`,
    "job.yaml":
      `name: j\nprompt: hi\nmcp_servers:\n  local: { command: ${everything}, tools: { allow: [get-sum] } }\n`,
  });
  const none = await hermes(["mcp", "list"], { cwd: dir, home: await tempDir() });
  assert.deepEqual([none.code, none.stdout], [0, "no MCP servers\n"]);
  const global = await hermes(["mcp", "list", "--json"], { cwd: dir, home: dir });
  assert.equal(global.code, 0, global.stderr);
  assert.deepEqual(JSON.parse(global.stdout).map((s: { name: string }) => s.name), ["global"]);
  const merged = await hermes(["mcp", "list", "job.yaml", "--json"], { cwd: dir, home: dir });
  assert.deepEqual(JSON.parse(merged.stdout).map((s: { name: string }) => s.name), ["global", "local"]);
  const usage = await hermes(["mcp", "show"], { cwd: dir, home: dir });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /expected `mcp list \[JOB\.yaml\] \[--json\]`/);
});
