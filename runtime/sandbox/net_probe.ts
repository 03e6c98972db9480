/**
 * Can host lists be enforced here? Opens a real bridge for one sandboxed `true`: the forwarder must start
 * in the sandbox's network namespace (nsenter, the user namespace bwrap made) and listen there.
 */
import { dirname } from "../core/path.ts";
import { errorMessage } from "../core/errors.ts";
import { findBridgeTools, forwarderEnv, openNetBridge, runBridged } from "./net_bridge.ts";
import { parseHostList } from "./net_hosts.ts";
import { type Bubblewrap, wrapCommand } from "./sandbox.ts";

export async function probeHostLists(
  bwrap: Bubblewrap,
  deno: string | null,
  env: Record<string, string>,
): Promise<{ ok: true; detail: string } | { ok: false; reason: string }> {
  const tools = findBridgeTools(deno);
  if (typeof tools === "string") return { ok: false, reason: tools };
  try {
    const bridge = await openNetBridge(parseHostList(["doctor.invalid"]), {
      privateDir: dirname(bwrap.seccomp.path),
      tools,
      env: forwarderEnv(env),
    });
    try {
      const wrapped = wrapCommand(["true"], {
        read: [],
        write: [],
        net: ["doctor.invalid"],
        env: {},
        cwd: "/",
      }, {
        bwrap,
        bridge,
      });
      const output = await runBridged(wrapped, bridge);
      if (!output.success) {
        return {
          ok: false,
          reason: `the sandbox with a bridge failed: ${new TextDecoder().decode(output.stderr)}`,
        };
      }
    } finally {
      await bridge.close();
    }
  } catch (error) {
    return { ok: false, reason: errorMessage(error) };
  }
  return {
    ok: true,
    detail:
      `host lists hold for the whole process tree: own network namespace, bridge by ${tools.nsenter}, ` +
      "filtering proxy (HTTP_PROXY/HTTPS_PROXY)",
  };
}
