/**
 * Host unix sockets through the real bubblewrap and its seccomp filter: without the host's network no
 * socket file in a visible directory and no abstract socket can be reached, while socketpair still works;
 * with `net: true` both connect (the allowed case). The client is perl (in every Debian base system),
 * the servers listen in this test process on the host.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type SandboxPolicy, wrapCommand } from "./sandbox.ts";
import { unixSocketFilter } from "./seccomp.ts";
import { sandboxTests, testBridge } from "./_testing.ts";
import { runBridged } from "./net_bridge.ts";

const { probe, ignore } = await sandboxTests("sandbox socket tests");
const PATH = "/usr/local/bin:/usr/bin:/bin";

/** Connects to $1 (a leading @ = abstract) and prints the first line the server sends. */
const CONNECT = `perl -MSocket -e '
  my $path = $ARGV[0]; $path =~ s/^@/\\0/;
  socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n";
  connect($s, pack_sockaddr_un($path)) or die "connect: $!\\n";
  print scalar <$s>;'`;

async function sandboxed(script: string, cwd: string, policy: Partial<SandboxPolicy>) {
  if (!probe.ok) throw new Error(`the sandbox does not work here: ${probe.reason}`);
  const hosts = Array.isArray(policy.net) ? policy.net : null;
  const bridge = hosts ? await testBridge(probe, hosts) : null;
  try {
    const wrapped = wrapCommand(["bash", "-c", script], {
      read: [cwd],
      write: [],
      net: false,
      env: { PATH },
      cwd,
      ...policy,
    }, { bwrap: probe, ...(bridge ? { bridge } : {}) });
    const out = await runBridged(wrapped, bridge);
    const text = new TextDecoder();
    return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
  } finally {
    await bridge?.close();
  }
}

/** A host unix server at `path` that greets each client; `accepted` counts them. */
function greeter(path: string) {
  const listener = Deno.listen({ transport: "unix", path });
  const server = { accepted: 0, close: () => listener.close(), done: Promise.resolve() };
  server.done = (async () => {
    for await (const conn of listener) {
      server.accepted++;
      await conn.write(new TextEncoder().encode("hello from the host\n")).catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  return server;
}

function socketTest(name: string, fn: (dir: string) => Promise<void>): void {
  Deno.test({
    name: `sandbox sockets: ${name}`,
    ignore,
    async fn() {
      const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-sockets-" }));
      try {
        await fn(dir);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

socketTest(
  "a socket file in a visible directory is refused without the network, reached with it",
  async (dir) => {
    const server = greeter(join(dir, "db.sock"));
    try {
      const refused = await sandboxed(`${CONNECT} ${dir}/db.sock`, dir, {});
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /socket: Operation not permitted/);
      assert.equal(server.accepted, 0, "the host server saw no client");
      // A host list (own network namespace and the proxy's bridge): host sockets stay refused.
      const hosts = await sandboxed(`${CONNECT} ${dir}/db.sock`, dir, { net: ["example.com:443"] });
      assert.match(hosts.stderr, /socket: Operation not permitted/);
      assert.equal(server.accepted, 0);
      const allowed = await sandboxed(`${CONNECT} ${dir}/db.sock`, dir, { net: true });
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.equal(allowed.stdout, "hello from the host\n");
      assert.equal(server.accepted, 1);
    } finally {
      server.close();
      await server.done;
    }
  },
);

socketTest("an abstract socket is unreachable without the network, reached with it", async (dir) => {
  const name = `hermes-test-${crypto.randomUUID()}`;
  const server = greeter(`\0${name}`);
  try {
    const refused = await sandboxed(`${CONNECT} @${name}`, dir, {});
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /socket: Operation not permitted/);
    const hosts = await sandboxed(`${CONNECT} @${name}`, dir, { net: ["example.com:443"] });
    assert.match(hosts.stderr, /socket: Operation not permitted/);
    assert.equal(server.accepted, 0);
    const allowed = await sandboxed(`${CONNECT} @${name}`, dir, { net: true });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stdout, "hello from the host\n");
  } finally {
    server.close();
    await server.done;
  }
});

socketTest("socketpair, pipes and child processes keep working under the filter", async (dir) => {
  const run = await sandboxed(
    `perl -MSocket -e '
      socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "pair: $!\\n";
      syswrite($a, "paired\\n"); sysread($b, my $got, 7); print $got;
      socketpair(my $c, my $d, AF_UNIX, SOCK_DGRAM, 0) and print "DGRAM\\n";
      print "dgram: $!\\n";'; echo piped | cat; (echo sub; exit 3); echo "status $?"`,
    dir,
    {},
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "paired\ndgram: Operation not permitted\npiped\nsub\nstatus 3\n");
});

socketTest(
  "a new user namespace is refused under the filter, also with a host list; processes still start",
  async (dir) => {
    // unshare(2) and clone(2) with CLONE_NEWUSER through perl's syscall(): EPERM; fork and exec still work.
    const script = `perl -e '
    my $nr = $ARGV[0]; syscall($nr, 0x10000000) == -1 and print "unshare: $!\n";
    my $pid = fork(); if ($pid == 0) { exec("true") } waitpid($pid, 0); print "child $?\n";' ${
      Deno.build.arch === "x86_64" ? 272 : 97
    }; unshare --user true 2>&1 | head -1 >&2; echo done`;
    for (const net of [false, ["example.com:443"]] as const) {
      const run = await sandboxed(script, dir, { net: net as SandboxPolicy["net"] });
      assert.equal(run.code, 0, `${net}: ${run.stderr}`);
      assert.equal(run.stdout, "unshare: Operation not permitted\nchild 0\ndone\n", `${net}`);
    }
    // The allowed case: with the host's network (no filter) the same syscall gets past seccomp — to bwrap's
    // --disable-userns, which refuses it another way, or succeeds where nothing refuses it.
    const open = await sandboxed(script, dir, { net: true });
    assert.equal(open.code, 0, open.stderr);
    assert.match(open.stdout, /child 0\ndone\n$/);
  },
);

socketTest(
  "only the families a command needs: vsock, packet and non-route netlink sockets are refused, inet ones made, " +
    "with the host's network too",
  async (dir) => {
    // Numbers, not Socket.pm constants: AF_VSOCK 40, AF_PACKET 17, AF_NETLINK 16 (NETLINK_ROUTE 0, AUDIT 9).
    const script = `perl -MSocket -e '
      for (["vsock", 40, SOCK_STREAM, 0], ["packet", 17, SOCK_DGRAM, 0], ["audit", 16, SOCK_RAW, 9],
           ["inet", AF_INET, SOCK_STREAM, 0], ["inet6", AF_INET6, SOCK_DGRAM, 0], ["route", 16, SOCK_RAW, 0]) {
        my ($name, @args) = @$_;
        print socket(my $s, $args[0], $args[1], $args[2]) ? "$name ok\n" : "$name: $!\n";
      }'`;
    for (const net of [false, true, ["example.com:443"]] as const) {
      const run = await sandboxed(script, dir, { net: net as SandboxPolicy["net"] });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(
        run.stdout,
        "vsock: Address family not supported by protocol\npacket: Address family not supported by protocol\n" +
          "audit: Protocol not supported\ninet ok\ninet6 ok\nroute ok\n",
        `${net}`,
      );
    }
    // With the host's network, unix sockets are what it grants: still made.
    const unix = await sandboxed(
      `perl -MSocket -e 'print socket(my $s, AF_UNIX, SOCK_STREAM, 0) ? "unix ok\\n" : "unix: $!\\n"'`,
      dir,
      {
        net: true,
      },
    );
    assert.equal(unix.stdout, "unix ok\n", unix.stderr);
  },
);

Deno.test("seccomp filter: 8-byte instructions, native arch checked first, ends in a return", () => {
  for (const arch of ["x86_64", "aarch64"] as const) {
    const bytes = unixSocketFilter(arch);
    assert.equal(bytes.length % 8, 0);
    const view = new DataView(bytes.buffer);
    assert.deepEqual([view.getUint16(0, true), view.getUint32(4, true)], [0x20, 4], "load seccomp_data.arch");
    assert.equal(view.getUint32(12, true), arch === "x86_64" ? 0xc000003e : 0xc00000b7);
    assert.equal(view.getUint16(bytes.length - 8, true), 0x06, "the last instruction returns");
  }
});
