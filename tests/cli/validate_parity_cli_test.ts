/**
 * `hermes validate` and RPC `job.validate` ask the App one question and give one verdict on one machine: a
 * job whose shell tool needs the OS sandbox is invalid for both where bubblewrap cannot start, and valid for
 * both where it can.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const JOB = `name: sandboxed
model: { provider: scripted, script: ./r.yaml }
prompt: list files
tools:
  shell: { allow: ["ls *"] }
`;

async function verdicts(dir: string, env: Record<string, string>) {
  const cli = await hermes(["validate", "job.yaml", "--json"], { cwd: dir, home: join(dir, "home"), env });
  const [file] = JSON.parse(cli.stdout) as { valid: boolean; job?: string; errors?: string[] }[];
  await using rpc = new RpcClient({ home: join(dir, "home"), cwd: dir, env });
  const answer = await rpc.request("job.validate", { path: "job.yaml" });
  const over = answer.result as { valid: boolean; name?: string; errors?: string[] };
  return { cli: { code: cli.code, ...file! }, rpc: over };
}

Deno.test("validate: without bubblewrap, CLI and RPC both refuse a sandboxed shell tool, naming the key", async () => {
  const dir = await writeFiles(await tempDir(), { "job.yaml": JOB, "r.yaml": "- content: hi\n" });
  const { cli, rpc } = await verdicts(dir, { HERMES_BWRAP: join(dir, "no-bwrap-here") });
  assert.equal(cli.code, 2);
  assert.equal(cli.valid, false);
  assert.equal(rpc.valid, false);
  // RPC names the file by its full path, the CLI as typed: the same lines otherwise.
  assert.deepEqual(rpc.errors!.map((line) => line.replace(`${dir}/`, "")), cli.errors);
  assert.match(
    cli.errors![0]!,
    /job\.yaml:5:\d+: tools\.shell: Cannot run the shell tool in its OS sandbox here/,
  );
});

Deno.test({
  name: "validate: where the sandbox runs, CLI and RPC both accept the same job",
  ignore: withoutSandbox,
  fn: async () => {
    const dir = await writeFiles(await tempDir(), { "job.yaml": JOB, "r.yaml": "- content: hi\n" });
    const { cli, rpc } = await verdicts(dir, {});
    assert.equal(cli.code, 0);
    assert.deepEqual([cli.valid, cli.job], [true, "sandboxed"]);
    assert.deepEqual(rpc, { valid: true, name: "sandboxed" });
  },
});
