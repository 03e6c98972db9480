/**
 * Test support: whether tests that need the real sandbox run here. They are skipped, with the reason
 * printed, where bubblewrap cannot run — except under CI=true, where `.ci/run` installs it and a missing
 * sandbox must fail the tests instead.
 */
import { dirname } from "../core/path.ts";
import { probeSandbox, type SandboxProbe } from "./probe.ts";
import type { Bubblewrap } from "./sandbox.ts";
import { findBridgeTools, forwarderEnv, type NetBridge, openNetBridge } from "./net_bridge.ts";
import { parseHostList } from "./net_hosts.ts";
import type { Refusal } from "./net_proxy.ts";

export async function sandboxTests(what: string, path = Deno.env.get("PATH") ?? ""): Promise<{
  probe: SandboxProbe;
  ignore: boolean;
}> {
  const probe = await probeSandbox({ path });
  const ignore = !probe.ok && Deno.env.get("CI") !== "true";
  if (!probe.ok) console.warn(`${what} ${ignore ? "skipped" : "will fail"}: ${probe.reason}; ${probe.hint}`);
  return { probe, ignore };
}

/**
 * A process cap that leaves `room` processes to a sandboxed command here: with a pids cgroup (root) the cap
 * counts the command's own tasks; with RLIMIT_NPROC (any other user) it also counts every task of this
 * user outside, which tests running in parallel keep changing, so those are added. Null as root without a
 * writable pids cgroup: nothing caps processes there (README "Resource limits"), and tests say so.
 */
export function processCap(probe: SandboxProbe, room: number): number | null {
  if (!probe.ok) return room;
  if (probe.cgroups.pids) return room;
  if (Deno.uid() === 0) return null;
  return room + userTasks() + 100;
}

/** Tasks (threads) of this user on the host, what RLIMIT_NPROC counts. */
function userTasks(): number {
  let tasks = 0;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const status = Deno.readTextFileSync(`/proc/${entry.name}/status`);
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== Deno.uid()) continue;
      tasks += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
    } catch {
      // exited meanwhile
    }
  }
  return tasks;
}

/** A host list's proxy and bridge for one sandboxed command, with this test process's deno running the forwarder. */
export async function testBridge(
  bwrap: Bubblewrap,
  hosts: readonly string[],
  onRefusal?: (refusal: Refusal) => void,
): Promise<NetBridge> {
  const tools = findBridgeTools(Deno.execPath());
  if (typeof tools === "string") throw new Error(`the network bridge cannot start here: ${tools}`);
  return await openNetBridge(parseHostList(hosts), {
    privateDir: dirname(bwrap.seccomp.path),
    tools,
    env: forwarderEnv(Deno.env.toObject()),
    ...(onRefusal ? { onRefusal } : {}),
  });
}

/**
 * What host-list tests aim at: two HTTP servers on the host's 127.0.0.1, one to grant ("granted\n") and one
 * not ("other\n"), and a host abstract unix socket counting its clients.
 */
export function netTargets() {
  const serve = (text: string) =>
    Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response(text));
  const granted = serve("granted\n");
  const other = serve("other\n");
  const abstract = `hermes-net-${crypto.randomUUID()}`;
  const unix = Deno.listen({ transport: "unix", path: `\0${abstract}` });
  let accepted = 0;
  const accepting = (async () => {
    for await (const conn of unix) {
      accepted++;
      conn.close();
    }
  })().catch(() => {});
  return {
    granted: granted.addr.port,
    other: other.addr.port,
    abstract,
    accepted: () => accepted,
    async close() {
      unix.close();
      await accepting;
      await granted.shutdown();
      await other.shutdown();
    },
  };
}
