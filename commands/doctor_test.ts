import assert from "node:assert/strict";
import { hermes, tempDir } from "../tests/_testing/cli.ts";
import { sandboxTests } from "../runtime/sandbox/_testing.ts";
import { probeSandbox } from "../runtime/sandbox/probe.ts";

const { ignore } = await sandboxTests("doctor's sandbox test");

interface Report {
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string; hint?: string }[];
}
const byName = (report: Report) => Object.fromEntries(report.checks.map((c) => [c.name, c]));

Deno.test(
  { name: "doctor: every check passes on a machine with bwrap, deno and a writable home", ignore },
  async () => {
    const home = await tempDir();
    const r = await hermes(["doctor", "--json"], { home });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const checks = byName(JSON.parse(r.stdout));
    assert.match(
      checks.sandbox!.detail,
      /^bubblewrap \S+ at \/.*bwrap runs a sandboxed command; no host unix sockets without the network \(seccomp, (x86_64|aarch64)\); limits: processes by (a pids cgroup per command|RLIMIT_NPROC)/,
    );
    // Which layer holds memory, as the probe found it here: the cgroup for the tree, or the rlimit alone.
    const probe = await probeSandbox({ path: Deno.env.get("PATH") ?? "" });
    const memory = probe.ok && probe.cgroups.memory
      ? `memory by a memory cgroup per command for the whole tree, ${
        probe.cgroups.memory.swap ? "swap included" : "RAM only (the kernel does not account swap here)"
      } (cgroup v${probe.cgroups.memory.version}, in ${probe.cgroups.memory.parent}), and RLIMIT_DATA per process`
      : "memory by RLIMIT_DATA only, per process, not for the whole tree";
    assert.ok(checks.sandbox!.detail.includes(memory), checks.sandbox!.detail);
    assert.match(checks.plugins!.detail, /^deno \d.*, runs in the plugin sandbox$/);
    assert.equal(checks.network!.ok, true, checks.network!.detail);
    assert.match(checks.network!.detail, /^host lists hold for the whole process tree/);
    assert.match(checks.store!.detail, /state\.db is writable \(not created yet\)/);
    const text = await hermes(["doctor"], { home });
    assert.match(text.stdout, /^sandbox +ok /m);
  },
);

Deno.test("doctor: a missing sandbox and an unwritable store fail with how to fix them, exit 1", async () => {
  const dir = await tempDir();
  await Deno.writeTextFile(`${dir}/file`, "");
  const r = await hermes(["doctor", "--json"], {
    home: `${dir}/file/home`,
    env: { HERMES_BWRAP: `${dir}/no-bwrap`, HERMES_DENO: `${dir}/no-deno` },
  });
  assert.equal(r.code, 1, r.stderr);
  const report: Report = JSON.parse(r.stdout);
  assert.equal(report.ok, false);
  const checks = byName(report);
  assert.equal(checks.sandbox!.ok, false);
  assert.match(checks.sandbox!.hint!, /bubblewrap/);
  assert.equal(checks.plugins!.ok, false);
  assert.equal(checks.network!.ok, false);
  assert.equal(checks.store!.ok, false);
  assert.match(checks.store!.detail, /^Cannot write the store .*file\/home\/state\.db/);
  const text = await hermes(["doctor"], {
    home: `${dir}/file/home`,
    env: { HERMES_BWRAP: `${dir}/no-bwrap` },
  });
  assert.match(text.stdout, /^sandbox +FAIL .*\(.*\)$/m);
  // deno itself works there, but plugins need the sandbox: said, with both ways out.
  assert.match(
    text.stdout,
    /^plugins +FAIL deno \d.*but plugins run in the OS sandbox, which cannot start here \(.*`sandbox: off` on each plugin entry\)$/m,
  );
});
