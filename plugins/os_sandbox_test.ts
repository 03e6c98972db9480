/**
 * The OS layer around every plugin process (docs/plugins.md): what Deno's permission checks do not
 * see — a symlink's target, a program the plugin runs, processes it leaves behind — bubblewrap still
 * bounds. Each denial next to the granted case that must work.
 */
import assert from "node:assert/strict";
import { ValidationError } from "../runtime/core/errors.ts";
import { notAborted, pluginTest, proberFixture, rejection, SECRET } from "./_testing.ts";
import type { PluginHost } from "./host.ts";
import { NO_SCOPE } from "../runtime/tools/tool.ts";

/** Reads or imports relative to the plugin's own module, and runs a bash script. */
const OPS = `{
  own: (rel) => Deno.readTextFile(new URL(rel, import.meta.url)),
  import_own: async (rel) => JSON.stringify(await import(new URL(rel, import.meta.url).href)),
  bash: async (script) => {
    const out = await new Deno.Command("/bin/bash", { args: ["-c", script], stdin: "null" }).output();
    const text = new TextDecoder();
    return "code " + out.code + "\\n" + text.decode(out.stdout) + text.decode(out.stderr);
  },
}`;

async function setUp() {
  const s = await proberFixture(OPS);
  await s.f.write({
    "prober/own.txt": "own file",
    "job-secret.txt": "job directory secret",
    "notes/rules.md": "granted notes",
  });
  await Deno.symlink("/", `${s.f.dir}/prober/root`);
  await Deno.symlink(`${s.outside}/secret.js`, `${s.f.dir}/prober/link.js`);
  return s;
}

async function probe(host: PluginHost, dir: string, op: string, arg: string) {
  return await host.tools()[0]!.run({ op, arg }, {
    session_id: "s1",
    job_dir: dir,
    env: {},
    host_env: {},
    signal: notAborted,
  }, NO_SCOPE);
}

pluginTest("a symlink in the plugin's own directory reaches the sandbox's root, not the host's", async () => {
  await using s = await setUp();
  const host = await s.f.start([{ path: "prober" }]);
  assert.deepEqual(await probe(host, s.f.dir, "own", "own.txt"), { status: "ok", content: "own file" });
  // Deno allows these (the path as written is inside the plugin's directory); the targets do not exist.
  for (const rel of ["root/etc/passwd", `root${s.f.dir}/state.db`, `root${s.outside}/secret.txt`]) {
    const outcome = await probe(host, s.f.dir, "own", rel);
    assert.equal(outcome.status, "error", rel);
    assert.match(outcome.content, /NotFound|No such file/, rel);
  }
  const imported = await probe(host, s.f.dir, "import_own", "link.js");
  assert.equal(imported.status, "error");
  assert.ok(!imported.content.includes(SECRET));
});

pluginTest("a program the plugin runs is sandboxed too: files, /proc, network", async () => {
  await using s = await setUp();
  const host = await s.f.start([{ path: "prober", permissions: { run: ["/bin/bash"] } }], {
    env: { OPENAI_API_KEY: "sk-host-secret-123456", PATH: "/usr/bin:/bin" },
  });
  const script =
    `pwd; ls -A; echo procs $(ls /proc | grep -c '^[0-9]'); cat ${s.outside}/secret.txt job-secret.txt /etc/passwd; ` +
    `cat /proc/${Deno.pid}/environ; ` +
    `(exec 3<>/dev/tcp/127.0.0.1/${s.port} && echo NET-OPEN) 2>/dev/null || echo NET-CLOSED; ` +
    `touch ${s.f.dir}/planted`;
  const outcome = await probe(host, s.f.dir, "bash", script);
  assert.equal(outcome.status, "ok");
  const text = outcome.content;
  // The job directory, holding only the plugin's own directory (its grant).
  assert.ok(text.includes(`\n${s.f.dir}\nprober\nprocs`), text);
  assert.ok(!text.includes(SECRET) && !text.includes("job directory secret") && !text.includes("root:"));
  assert.ok(!text.includes("sk-host-secret"));
  assert.ok(Number(/procs (\d+)/.exec(text)?.[1]) < 10, text); // its own PID namespace
  assert.match(text, /NET-CLOSED/);
  // (A temp job directory lies in the sandbox's private /tmp: the file lands there, not on the host.)
  await assert.rejects(Deno.stat(`${s.f.dir}/planted`), Deno.errors.NotFound);
});

pluginTest("with read, write and net granted, the program reaches exactly those", async () => {
  // (net: true: a host list next to run is refused at load, since the program would not be bound by it.)
  await using s = await setUp();
  await s.f.write({ "out/.keep": "" });
  const host = await s.f.start([{
    path: "prober",
    permissions: {
      run: ["/bin/bash"],
      read: ["./notes", `${s.outside}/secret.txt`],
      write: ["./out"],
      net: true,
    },
  }]);
  const script = `cat notes/rules.md; echo; cat ${s.outside}/secret.txt; echo; echo made > out/made.txt; ` +
    `(exec 3<>/dev/tcp/127.0.0.1/${s.port} && echo NET-OPEN) 2>/dev/null || echo NET-CLOSED; ` +
    `cat job-secret.txt`;
  const outcome = await probe(host, s.f.dir, "bash", script);
  assert.match(outcome.content, /granted notes\ntop secret contents\nNET-OPEN/);
  assert.match(outcome.content, /job-secret\.txt: No such file or directory/);
  assert.equal(await Deno.readTextFile(`${s.f.dir}/out/made.txt`), "made\n");
});

pluginTest("processes a plugin starts, setsid ones included, die when it is stopped", async () => {
  await using s = await setUp();
  const marker = String(4_000_000 + Math.floor(Math.random() * 1_000_000));
  const host = await s.f.start([{ path: "prober", permissions: { run: ["/bin/bash"] } }]);
  const outcome = await probe(host, s.f.dir, "bash", `setsid sleep ${marker} >/dev/null 2>&1 & echo started`);
  assert.match(outcome.content, /started/);
  for (let i = 0; i < 200 && sleepers(marker).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(sleepers(marker).length > 0, "the setsid child runs while the plugin does");
  await host.stop();
  for (let i = 0; i < 200 && sleepers(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(sleepers(marker), []);
});

pluginTest("write: true and a missing write root are refused at load; an existing root loads", async () => {
  await using s = await setUp();
  const refused = await rejection(s.f.start([{ path: "prober", permissions: { write: true } }]));
  assert.ok(refused instanceof ValidationError);
  assert.match(refused.message, /prober.*Cannot grant write: true inside the OS sandbox.*sandbox: off/);
  const missing = await rejection(s.f.start([{ path: "prober", permissions: { write: ["./nope"] } }]));
  assert.match(missing.message, /write access to ".*nope" in the sandbox: it does not exist/);
  await s.f.write({ "out/.keep": "" });
  const host = await s.f.start([{ path: "prober", permissions: { write: ["./out"] } }]);
  assert.equal(host.plugins[0]!.name, "prober");
});

pluginTest(
  "without a working bubblewrap plugins are refused saying how to fix it; sandbox: off runs them",
  async () => {
    await using s = await setUp();
    const env = { HERMES_BWRAP: `${s.f.dir}/no-such-bwrap`, PATH: "/usr/bin:/bin" };
    const refused = await rejection(s.f.start([{ path: "prober" }], { env }));
    assert.ok(refused instanceof ValidationError);
    assert.match(refused.message, /^Cannot start plugin prober in its OS sandbox: bubblewrap cannot be run/);
    assert.match(refused.message, /apt-get install bubblewrap.*`sandbox: off` on the plugin entry/);
    const host = await s.f.start([{ path: "prober", permissions: { run: ["/bin/bash"] }, sandbox: "off" }], {
      env,
    });
    assert.ok(
      s.f.logs.some((line) =>
        /prober has sandbox: off: it runs on this host without the OS sandbox/.test(line)
      ),
    );
    // Unsandboxed, a program it runs sees the job directory as it is.
    const outcome = await probe(host, s.f.dir, "bash", "cat job-secret.txt");
    assert.match(outcome.content, /job directory secret/);
  },
);

/** Host pids of `sleep MARKER` processes. */
function sleepers(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      if (cmdline === `sleep\0${marker}\0` && !/^\d+ \(.*\) Z/.test(stat)) pids.push(Number(entry.name));
    } catch {
      // gone
    }
  }
  return pids;
}

pluginTest("a program the plugin runs cannot reach a host unix socket; with net: true it can", async () => {
  await using s = await setUp();
  await s.f.write({ "sock/.keep": "" });
  const path = `${s.f.dir}/sock/host.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const serving = (async () => {
    for await (const conn of listener) {
      await conn.write(new TextEncoder().encode("host answered\n")).catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  try {
    const connect = `perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; ` +
      `connect($s, pack_sockaddr_un("${path}")) or die "connect: $!\\n"; print scalar <$s>'`;
    const grant = { run: ["/bin/bash", "/usr/bin/perl"], read: ["./sock"] };
    const closed = await s.f.start([{ path: "prober", permissions: grant }]);
    const refused = await probe(closed, s.f.dir, "bash", connect);
    assert.match(refused.content, /socket: Operation not permitted/);
    await closed.stop();
    const open = await s.f.start([{ path: "prober", permissions: { ...grant, net: true } }]);
    const reached = await probe(open, s.f.dir, "bash", connect);
    assert.match(reached.content, /host answered/);
  } finally {
    listener.close();
    await serving;
  }
});
