/**
 * What a sandboxed shell command shares with the host, through `hermes run` and the real bwrap: socket
 * families no network namespace separates (vsock, packet) are refused with and without a host list while
 * inet sockets are still made; where no memory cgroup can be made the run says its memory cap is per
 * process.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "./_cli.ts";
import { withoutSandbox } from "./_sandbox.ts";
import { findCgroups } from "../runtime/sandbox/cgroup.ts";
import { isInternalAddress, isIP, ownAddresses } from "../runtime/sandbox/ip_address.ts";

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
    // hermes doctor says the same.
    const doctor = await hermes(["doctor", "--json"], { home: dir });
    const check = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "sandbox");
    assert.match(
      check.detail,
      findCgroups(Deno.uid() === 0).memory === null
        ? /memory by RLIMIT_DATA only, per process/
        : /memory cgroup/,
    );
  },
});

Deno.test("run --untrusted: a job raising a tool's output cap above 256KiB exits 2 naming each key", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: big
model: { provider: scripted, script: ./replies.yaml }
prompt: go
tools:
  shell: { max_output: 300MiB }
  read_file: { max_bytes: 1MiB }
  http_fetch: { hosts: [example.com], max_output: 512KiB }
`,
    "replies.yaml": "- content: never\n",
  });
  const run = await hermes(["run", "job.yaml", "--untrusted"], { cwd: dir, home: dir });
  assert.equal(run.code, 2, run.stderr);
  const rule = "refused by --untrusted \\(sandbox_limits\\.max_output\\)";
  for (
    const [key, value] of [
      ["tools\\.shell\\.max_output", "300MiB"],
      ["tools\\.read_file\\.max_bytes", "1MiB"],
      ["tools\\.http_fetch\\.max_output", "512KiB"],
    ]
  ) {
    assert.match(
      run.stderr,
      new RegExp(`job\\.yaml:\\d+:\\d+: ${key}: ${rule}: ${value} is above the ceiling 256KiB`),
    );
  }
});

Deno.test({
  name: "run: a policy's max_output caps a job's shell output it left unset; a job within --untrusted runs",
  ignore: withoutSandbox,
  async fn() {
    const command = "printf 'y%.0s' $(seq 5000)";
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: capped
model: { provider: scripted, script: ./replies.yaml }
prompt: go
tools:
  shell: {}
`,
      "policy.yaml": "sandbox_limits: { max_output: 1KiB }\n",
      "replies.yaml": `- tool_calls: [{ name: shell, arguments: { command: ${JSON.stringify(command)} } }]
- content: Done.
`,
    });
    const capped = await runEvents(dir, { args: ["--policy", "policy.yaml"] });
    assert.equal(capped.code, 0, capped.stderr);
    const output = String(capped.events.find((e) => e.type === "tool.result")?.content ?? "");
    assert.match(output, /\[output truncated at 1024 bytes\]/, output.slice(-200));
    assert.ok(output.length < 2000, `${output.length} characters kept`);
    // The neighbour: within the untrusted ceiling the whole output is kept.
    await Deno.writeTextFile(
      `${dir}/job.yaml`,
      (await Deno.readTextFile(`${dir}/job.yaml`)).replace(
        "shell: {}",
        "shell: { max_output: 128KiB }",
      ),
    );
    const whole = await runEvents(dir, { args: ["--untrusted"] });
    assert.equal(whole.code, 0, whole.stderr);
    const kept = String(whole.events.find((e) => e.type === "tool.result")?.content ?? "");
    assert.ok(kept.includes("y".repeat(5000)), `${kept.length} characters kept`);
    assert.ok(!kept.includes("truncated"), kept.slice(-200));
  },
});

// An address of this host outside every fixed internal range (a cloud VM's public one; here, if there is one).
const ownPublic = [...ownAddresses()].find((address) => isIP(address) === 4 && !isInternalAddress(address));

Deno.test({
  name: "run: http_fetch with hosts [*] cannot reach this host's own public address; an entry naming it can",
  ignore: ownPublic === undefined,
  async fn() {
    const server = Deno.serve({ hostname: "0.0.0.0", port: 0, onListen() {} }, () => new Response("own\n"));
    try {
      const url = `http://${ownPublic}:${server.addr.port}/`;
      const fetchJob = (hosts: string) => ({
        "job.yaml": `name: own
model: { provider: scripted, script: ./replies.yaml }
prompt: go
tools:
  http_fetch: { hosts: ${hosts} }
`,
        "replies.yaml": `- tool_calls: [{ name: http_fetch, arguments: { url: "${url}" } }]
- content: Done.
`,
      });
      const any = await runEvents(await writeFiles(await tempDir(), fetchJob(`["*"]`)));
      assert.equal(any.code, 0, any.stderr);
      const refused = String(any.events.find((e) => e.type === "tool.result")?.content ?? "");
      assert.match(refused, /internal address/, refused);
      assert.doesNotMatch(refused, /own/);
      const named = await runEvents(
        await writeFiles(await tempDir(), fetchJob(`["${ownPublic}:${server.addr.port}"]`)),
      );
      assert.equal(named.code, 0, named.stderr);
      const reached = String(named.events.find((e) => e.type === "tool.result")?.content ?? "");
      assert.match(reached, /^HTTP 200\nown\n/, reached);
    } finally {
      await server.shutdown();
    }
  },
});
