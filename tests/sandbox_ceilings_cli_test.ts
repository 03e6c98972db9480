/**
 * What a sandboxed shell command shares with the host, through `hermes run` and the real bwrap: socket
 * families no network namespace separates (vsock, packet) are refused with and without a host list while
 * inet sockets are still made; where no memory cgroup can be made the run says its memory cap is per
 * process.
 */
import assert from "node:assert/strict";
import { runEvents, tempDir, writeFiles } from "./_cli.ts";
import { withoutSandbox } from "./_sandbox.ts";
import { findCgroups } from "../runtime/sandbox/cgroup.ts";

function job(net: string): string {
  return `name: ceilings
model: { provider: scripted, script: ./replies.yaml }
prompt: Open sockets.
tools:
  shell: { sandbox: { net: ${net} } }
`;
}

// AF_VSOCK 40 (a cloud VM's hypervisor agents listen there), AF_PACKET 17, then the allowed AF_INET.
const SOCKETS = `perl -MSocket -e '
  for (["vsock", 40, SOCK_STREAM], ["packet", 17, SOCK_DGRAM], ["inet", AF_INET, SOCK_STREAM]) {
    my ($name, $family, $type) = @$_;
    print socket(my $s, $family, $type, 0) ? "$name ok\\n" : "$name: $!\\n";
  }'`;

for (const net of ["false", '["example.com:443"]']) {
  Deno.test({
    name: `run: a sandboxed command cannot make vsock or packet sockets, still inet ones (net: ${net})`,
    ignore: withoutSandbox,
    async fn() {
      const dir = await writeFiles(await tempDir(), {
        "job.yaml": job(net),
        "replies.yaml": `- tool_calls: [{ name: shell, arguments: { command: ${JSON.stringify(SOCKETS)} } }]
- content: Done.
`,
      });
      const { code, stderr, events } = await runEvents(dir);
      assert.equal(code, 0, stderr);
      const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
      assert.match(output, /vsock: Address family not supported by protocol\n/, output);
      assert.match(output, /packet: Address family not supported by protocol\n/, output);
      assert.match(output, /inet ok\n/, output);
    },
  });
}

Deno.test({
  name: "run: the sandbox event says the memory cap is per process exactly where no memory cgroup exists",
  ignore: withoutSandbox,
  async fn() {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": job("false"),
      "replies.yaml": "- content: Done.\n",
    });
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const said = events.filter((e) => e.type === "sandbox");
    // The same user in the same cgroup as the run: what it finds, the run found.
    if (findCgroups(Deno.uid() === 0).memory === null) {
      assert.equal(said.length, 1, JSON.stringify(said));
      assert.equal(said[0]!.mode, "on");
      assert.equal(said[0]!.memory, "per_process");
      assert.match(String(said[0]!.reason), /per process/);
    } else {
      assert.deepEqual(said, [], "a memory cgroup caps the whole tree: nothing to say");
    }
    assert.equal("sandbox" in events.at(-1)!, false, "the result is not marked: the sandbox is on");
  },
});
