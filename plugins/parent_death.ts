/**
 * A launcher that makes the kernel SIGKILL the plugin when its host dies (util-linux `setpriv --pdeathsig`).
 * A plugin whose hook spins never reads its stdin, so "exit when stdin closes" alone cannot end it after
 * the host is SIGKILLed. Empty where there is no setpriv (the stdin rule still applies).
 */
export function parentDeathLauncher(): string[] {
  if (Deno.build.os !== "linux") return [];
  for (const path of ["/usr/bin/setpriv", "/bin/setpriv"]) {
    try {
      if (Deno.statSync(path).isFile) return [path, "--pdeathsig", "KILL", "--"];
    } catch {
      // not here
    }
  }
  return [];
}
