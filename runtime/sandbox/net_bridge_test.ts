/**
 * Host lists through the real bubblewrap, the bridge and the proxy: two HTTP servers on the host's
 * 127.0.0.1, one granted (by its address, the only way to reach an internal address) and one not. curl and
 * deno's fetch reach the granted one through the proxy, plainly and through CONNECT; the other gets 403
 * and is reported; a connection that ignores the proxy has no route, from the command or any child of it.
 */
import assert from "node:assert/strict";
import { netTargets, sandboxTests, testBridge } from "./_testing.ts";
import { wrapCommand } from "./sandbox.ts";
import type { Refusal } from "./net_proxy.ts";
import { runBridged } from "./net_bridge.ts";

const { probe, ignore } = await sandboxTests("sandbox host list tests");
const PATH = `${Deno.execPath().replace(/\/[^/]*$/, "")}:/usr/local/bin:/usr/bin:/bin`;

async function inSandbox(script: string, hosts: readonly string[]) {
  if (!probe.ok) throw new Error(`the sandbox does not work here: ${probe.reason}`);
  const refusals: Refusal[] = [];
  const bridge = await testBridge(probe, hosts, (refusal) => refusals.push(refusal));
  try {
    const wrapped = wrapCommand(["bash", "-c", script], {
      // deno's own directory may lie under the private /tmp (the non-root CI pass).
      read: [Deno.execPath().replace(/\/[^/]*$/, "")],
      write: [],
      net: hosts,
      env: { PATH, HOME: "/tmp", DENO_DIR: "/tmp/.deno", NO_COLOR: "1" },
      cwd: "/",
    }, { bwrap: probe, bridge });
    const out = await runBridged(wrapped, bridge);
    const text = new TextDecoder();
    return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr), refusals };
  } finally {
    await bridge.close();
  }
}

function hostTest(name: string, fn: (granted: number, other: number) => Promise<void>): void {
  Deno.test({
    name: `sandbox host list: ${name}`,
    ignore,
    async fn() {
      const targets = netTargets();
      try {
        await fn(targets.granted, targets.other);
      } finally {
        await targets.close();
      }
    },
  });
}

hostTest(
  "curl reaches the granted host, plainly and through CONNECT; the other gets 403",
  async (granted, other) => {
    const run = await inSandbox(
      [
        `curl -sS -m 10 http://127.0.0.1:${granted}/`,
        `curl -sS -m 10 --proxytunnel http://127.0.0.1:${granted}/`,
        `curl -sS -m 10 -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:${other}/`,
        `curl -sS -m 10 --proxytunnel http://127.0.0.1:${other}/ 2>&1 | grep -o 'response 403'`,
      ].join("; "),
      [`127.0.0.1:${granted}`],
    );
    assert.equal(run.stdout, "granted\ngranted\n403\nresponse 403\n", run.stderr);
    assert.deepEqual(run.refusals.map((r) => [r.host, r.port, r.reason]), [
      ["127.0.0.1", other, "is not in the sandbox's host list"],
      ["127.0.0.1", other, "is not in the sandbox's host list"],
    ]);
  },
);

hostTest(
  "deno's fetch inside honours HTTPS_PROXY/HTTP_PROXY and is held to the list",
  async (granted, other) => {
    const fetchBoth =
      `const show = async (p) => { try { const r = await fetch("http://127.0.0.1:" + p + "/"); ` +
      `console.log(r.status, (await r.text()).trim()); } catch (e) { console.log("failed", e.name); } }; ` +
      `await show(${granted}); await show(${other});`;
    const run = await inSandbox(`deno eval '${fetchBoth}'`, [`127.0.0.1:${granted}`]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^200 granted\n403 hermes sandbox proxy: 127\.0\.0\.1:\d+ is not in the sandbox's host list\n$/,
    );
  },
);

hostTest(
  "a connection that ignores the proxy has no route, from the command and from a child",
  async (granted) => {
    const run = await inSandbox(
      [
        `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${granted}/ >/dev/null 2>&1 || echo "direct: refused"`,
        `(exec 3<>/dev/tcp/127.0.0.1/${granted}) 2>/dev/null || echo "dev/tcp: refused"`,
        // A detached grandchild that drops the variables, as a program of a plugin or a build tool would.
        `setsid env -u http_proxy -u HTTP_PROXY -u all_proxy -u ALL_PROXY curl -sS -m 5 http://127.0.0.1:${granted}/ >/dev/null 2>&1 || echo "child: refused"`,
        `ip route 2>/dev/null | grep -c . || true`,
      ].join("; "),
      [`127.0.0.1:${granted}`],
    );
    assert.equal(run.stdout, "direct: refused\ndev/tcp: refused\nchild: refused\n0\n", run.stderr);
  },
);

hostTest(
  "an internal address is reached only through a rule naming it, not through a name",
  async (granted) => {
    // localhost is granted by name but resolves to loopback: refused, with the reason.
    const run = await inSandbox(`curl -sS -m 10 http://localhost:${granted}/`, [`localhost:${granted}`]);
    assert.match(
      run.stdout,
      /localhost:\d+ resolves to an internal address \(127\.0\.0\.1[^)]*\); only a rule naming/,
    );
    assert.equal(run.refusals.length, 1);
  },
);
