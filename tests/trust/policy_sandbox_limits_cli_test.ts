/**
 * A trust policy's `sandbox_limits`: a job file may not raise the resource limits of its shell sandbox or
 * MCP servers' sandboxes (processes, memory, file_size, tmp) above the ceilings, nor a plugin's max_memory
 * above the memory one, nor switch them off with `sandbox: off`; exit 2 before any model call naming the job
 * key and the rule. A job within them runs, and one that sets no limit gets the ceiling where it is below the
 * default. `--untrusted` holds the defaults as ceilings. Real CLI and bwrap.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const MODEL = "model: { provider: scripted, script: ./r.yaml }\nprompt: go\n";
const POLICY = "sandbox_limits: { processes: 256, memory: 1GiB, file_size: 100MiB, tmp: 64MiB }\n";

async function project(job: string, files: Record<string, string> = {}): Promise<string> {
  return await writeFiles(await tempDir(), {
    "job.yaml": `name: limits\n${MODEL}${job}`,
    "policy.yaml": POLICY,
    "r.yaml": "- content: ran\n",
    "mod.ts": "export function register() {}\n",
    ...files,
  });
}

/** `hermes run job.yaml ARGS`: exit 2, one stderr line per pattern, no session started. */
async function refused(dir: string, args: string[], lines: RegExp[]): Promise<void> {
  const run = await hermes(["run", "job.yaml", ...args], { cwd: dir, home: dir });
  assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`);
  const got = run.stderr.trimEnd().split("\n");
  assert.equal(got.length, lines.length, run.stderr);
  lines.forEach((line, i) => assert.match(got[i]!, line, run.stderr));
  const list = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
  assert.deepEqual(JSON.parse(list.stdout), [], "refused before anything ran");
}

const at = (rule: string) =>
  `refused by policy policy\\.yaml \\(sandbox_limits\\.${rule} at policy\\.yaml:1:\\d+\\)`;

Deno.test("policy sandbox_limits: a job raising each limit above its ceiling exits 2 naming key and rule", async () => {
  const dir = await project(`tools:
  shell:
    sandbox: { limits: { processes: 4096, memory: 8GiB, file_size: 2GiB, tmp: 1GiB } }
mcp_servers:
  big: { command: npx, args: [server], sandbox: { limits: { memory: 16GiB } } }
plugins:
  - { path: ./mod.ts, max_memory: 2GiB }
`);
  await refused(dir, ["--policy", "policy.yaml"], [
    new RegExp(
      `^hermes: job\\.yaml:6:37: tools\\.shell\\.sandbox\\.limits\\.processes: ${
        at("processes")
      }: 4096 is above the ceiling 256$`,
    ),
    new RegExp(
      `job\\.yaml:6:\\d+: tools\\.shell\\.sandbox\\.limits\\.memory: ${
        at("memory")
      }: 8GiB is above the ceiling 1GiB$`,
    ),
    new RegExp(
      `job\\.yaml:6:\\d+: tools\\.shell\\.sandbox\\.limits\\.file_size: ${at("file_size")}: 2GiB is above`,
    ),
    new RegExp(
      `job\\.yaml:6:\\d+: tools\\.shell\\.sandbox\\.limits\\.tmp: ${
        at("tmp")
      }: 1GiB is above the ceiling 64MiB$`,
    ),
    new RegExp(
      `job\\.yaml:8:\\d+: mcp_servers\\.big\\.sandbox\\.limits\\.memory: ${at("memory")}: 16GiB is above`,
    ),
    new RegExp(
      `job\\.yaml:10:\\d+: plugins\\[0\\]\\.max_memory: ${at("memory")}: 2GiB is above the ceiling 1GiB$`,
    ),
  ]);
});

Deno.test("policy sandbox_limits: a job may not switch the limits off with sandbox: off", async () => {
  const dir = await project("tools: { shell: { sandbox: off } }\n");
  await refused(dir, ["--policy", "policy.yaml"], [
    /job\.yaml:4:\d+: tools\.shell\.sandbox: refused by policy policy\.yaml \(sandbox_limits at policy\.yaml:1:\d+\): turning the OS sandbox off lifts the resource limits/,
  ]);
  // The same job with no sandbox_limits in the policy runs (sandbox: off is allowed by default).
  await Deno.writeTextFile(`${dir}/policy.yaml`, "limits: { max_turns: 5 }\n");
  const allowed = await hermes(["run", "job.yaml", "--policy", "policy.yaml"], { cwd: dir, home: dir });
  assert.equal(allowed.code, 0, allowed.stderr);
});

Deno.test("run --untrusted: the default limits are the ceilings", async () => {
  const dir = await project("tools: { shell: { sandbox: { limits: { memory: 8GiB, processes: 4096 } } } }\n");
  await refused(dir, ["--untrusted"], [
    /job\.yaml:4:\d+: tools\.shell\.sandbox\.limits\.processes: refused by --untrusted \(sandbox_limits\.processes\): 4096 is above the ceiling 512$/,
    /job\.yaml:4:\d+: tools\.shell\.sandbox\.limits\.memory: refused by --untrusted \(sandbox_limits\.memory\): 8GiB is above the ceiling 4GiB$/,
  ]);
});

Deno.test({
  name: "policy sandbox_limits: a job within the ceilings runs; one that sets none gets the ceiling",
  ignore: withoutSandbox,
}, async () => {
  // Writes 20 MB into /tmp: room under the default 512MiB, not under the policy's 8MiB.
  const replies =
    `- tool_calls: [{ name: shell, arguments: { command: "dd if=/dev/zero of=/tmp/f bs=1M count=20 2>&1; echo status $?" } }]
- content: done
`;
  const job = (limits: string) => `tools: { shell: { sandbox: { limits: ${limits} } } }\n`;
  const dir = await project(job("{ processes: 128, memory: 512MiB, file_size: 64MiB, tmp: 4MiB }"), {
    "r.yaml": replies,
    "policy.yaml": "sandbox_limits: { processes: 256, memory: 1GiB, file_size: 100MiB, tmp: 8MiB }\n",
  });
  const run = async () => {
    const r = await hermes(["run", "job.yaml", "--policy", "policy.yaml", "--output", "stream-json"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split("\n").map((line) => JSON.parse(line));
    return String(events.find((e) => e.type === "tool.result").content);
  };
  assert.match(
    await run(),
    /No space left on device[\s\S]*4194304 bytes[\s\S]*status 1/,
    "within: its own 4MiB",
  );
  await Deno.writeTextFile(`${dir}/job.yaml`, `name: limits\n${MODEL}tools: { shell: {} }\n`);
  assert.match(
    await run(),
    /No space left on device[\s\S]*8388608 bytes[\s\S]*status 1/,
    "none set: the ceiling, 8MiB",
  );
  await Deno.writeTextFile(`${dir}/policy.yaml`, "limits: { max_turns: 5 }\n");
  assert.match(
    await run(),
    /20971520 bytes[^\n]*copied[\s\S]*status 0\n$/,
    "no ceiling: the default, 512MiB",
  );
});
