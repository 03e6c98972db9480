/**
 * What a sandboxed shell command shares with the host, through `hermes run` and the real bwrap: socket
 * families no network namespace separates (vsock, packet) are refused with the host's network, a host list
 * or none, while inet sockets are still made; where no memory cgroup can be made the run says its memory cap
 * is per process; what a session stores of tool results is bounded (max_session_output).
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { findCgroups } from "../../runtime/sandbox/cgroup.ts";
import { isInternalAddress, isIP, ownAddresses } from "../../runtime/sandbox/ip_address.ts";

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

for (const net of ["false", "true", '["example.com:443"]']) {
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

/** The tool rows of a session as `hermes sessions export` gives them, in the order they were stored. */
async function storedToolResults(dir: string, id: string): Promise<string[]> {
  const exported = await hermes(["sessions", "export", id], { cwd: dir, home: dir });
  assert.equal(exported.code, 0, exported.stderr);
  return exported.stdout.trim().split("\n").map((line) => JSON.parse(line))
    .filter((line) => line.type === "message" && line.role === "tool")
    .sort((a, b) => a.seq - b.seq)
    .map((line) => String(line.content));
}

const bytes = (text: string) => new TextEncoder().encode(text).length;

Deno.test("run: a policy's max_session_output cuts the tool results a session stores past it; none: all whole", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: many
model: { provider: scripted, script: ./replies.yaml }
prompt: go
tools:
  read_file: {}
`,
    "policy.yaml": "sandbox_limits: { max_session_output: 3KiB }\n",
    "a.txt": "a".repeat(2000),
    "b.txt": "b".repeat(2000),
    "c.txt": "c".repeat(2000),
    "replies.yaml": `- tool_calls: [{ name: read_file, arguments: { path: a.txt } }]
- tool_calls: [{ name: read_file, arguments: { path: b.txt } }]
- tool_calls: [{ name: read_file, arguments: { path: c.txt } }]
- content: Done.
`,
  });
  const capped = await runEvents(dir, { args: ["--policy", "policy.yaml"] });
  assert.equal(capped.code, 0, capped.stderr);
  const [a, b, c, ...more] = await storedToolResults(dir, String(capped.events.at(-1)!.session_id));
  assert.equal(more.length, 0, "one row per result: nothing archived past the ceiling");
  assert.ok(a!.includes("a".repeat(2000)), "the first result fits whole");
  const marker =
    /characters cut from this tool result \(the session's stored tool results reached sandbox_limits\.max_session_output, 3072 bytes\); the rest was not stored/;
  assert.match(b!, marker);
  assert.ok(b!.startsWith("bbbb") && b!.endsWith("bbbb"), "head and tail kept");
  assert.match(c!, marker);
  assert.ok(!c!.includes("cc"), "past the ceiling, the marker alone");
  assert.ok(bytes(a! + b!) <= 3072, `${bytes(a! + b!)} bytes stored before the ceiling`);

  // The neighbour: without the policy every result is stored whole.
  const whole = await runEvents(dir);
  assert.equal(whole.code, 0, whole.stderr);
  const stored = await storedToolResults(dir, String(whole.events.at(-1)!.session_id));
  assert.deepEqual(stored.map((text) => text.length), [2000, 2000, 2000]);
  assert.ok(stored.every((text) => !text.includes("max_session_output")));
});

Deno.test("run --untrusted: the session stores at most 16MiB of tool results; a job within it stores them whole", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: flood
model: { provider: scripted, script: ./replies.yaml }
prompt: go
tools:
  read_file: { dedup: false }
`,
    "big.txt": "z".repeat(256 * 1024),
    // 70 reads of 256KiB in one reply: 17.5MiB asked to be stored.
    "replies.yaml": `- tool_calls: [${
      Array.from({ length: 70 }, (_, i) => `{ id: c${i}, name: read_file, arguments: { path: big.txt } }`)
        .join(", ")
    }]
- content: Done.
`,
  });
  const flood = await runEvents(dir, { args: ["--untrusted"] });
  assert.equal(flood.code, 0, flood.stderr);
  const stored = await storedToolResults(dir, String(flood.events.at(-1)!.session_id));
  const total = stored.reduce((sum, text) => sum + bytes(text), 0);
  const markers = stored.filter((text) => text.includes("sandbox_limits.max_session_output")).length;
  assert.ok(markers > 0, "results past the ceiling are cut");
  assert.ok(total <= 16 * 1024 * 1024 + markers * 300, `${total} bytes stored, ${markers} cut`);

  // The neighbour: two reads are far within it, stored as they came.
  await Deno.writeTextFile(
    `${dir}/replies.yaml`,
    `- tool_calls: [{ id: x, name: read_file, arguments: { path: big.txt } }, { id: y, name: read_file, arguments: { path: big.txt } }]
- content: Done.
`,
  );
  const two = await runEvents(dir, { args: ["--untrusted"] });
  assert.equal(two.code, 0, two.stderr);
  const kept = await storedToolResults(dir, String(two.events.at(-1)!.session_id));
  assert.ok(kept.every((text) => !text.includes("max_session_output")), "nothing cut within the ceiling");
  assert.ok(kept.some((text) => text.includes("z".repeat(1000))));
});

Deno.test("run --resume: max_session_output counts what the session's earlier runs stored", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: resumed
model: { provider: scripted, script: ./replies.yaml }
prompt: go
tools:
  read_file: {}
`,
    "policy.yaml": "sandbox_limits: { max_session_output: 3KiB }\n",
    "a.txt": "a".repeat(2000),
    "b.txt": "b".repeat(2000),
    "replies.yaml": `- tool_calls: [{ name: read_file, arguments: { path: a.txt } }]
- content: Done.
`,
  });
  const first = await runEvents(dir, { args: ["--policy", "policy.yaml"] });
  assert.equal(first.code, 0, first.stderr);
  const id = String(first.events.at(-1)!.session_id);
  assert.deepEqual((await storedToolResults(dir, id)).map((text) => text.length), [2000]);
  await Deno.writeTextFile(
    `${dir}/replies.yaml`,
    `- tool_calls: [{ name: read_file, arguments: { path: b.txt } }]
- content: Done again.
`,
  );
  const again = await hermes(["--policy", "policy.yaml", "run", "--resume", id, "-p", "again"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(again.code, 0, again.stderr);
  const [a, b] = await storedToolResults(dir, id);
  assert.equal(a!.length, 2000);
  assert.match(b!, /max_session_output, 3072 bytes\); the rest was not stored/);
  assert.ok(bytes(a! + b!) <= 3072, `${bytes(a! + b!)} bytes stored`);

  // The neighbour: resumed without the policy, the next result is stored whole (nothing kept in the job).
  const open = await hermes(["run", "--resume", id, "-p", "once more"], { cwd: dir, home: dir });
  assert.equal(open.code, 0, open.stderr);
  assert.equal((await storedToolResults(dir, id)).at(-1), "b".repeat(2000));
});
