/**
 * Test support: whether tests that need the real sandbox run here. They are skipped, with the reason
 * printed, where bubblewrap cannot run — except under CI=true, where `.ci/run` installs it and a missing
 * sandbox must fail the tests instead.
 */
import { probeSandbox, type SandboxProbe } from "./probe.ts";

export async function sandboxTests(what: string, path = Deno.env.get("PATH") ?? ""): Promise<{
  probe: SandboxProbe;
  ignore: boolean;
}> {
  const probe = await probeSandbox({ path });
  const ignore = !probe.ok && Deno.env.get("CI") !== "true";
  if (!probe.ok) console.warn(`${what} ${ignore ? "skipped" : "will fail"}: ${probe.reason}; ${probe.hint}`);
  return { probe, ignore };
}
