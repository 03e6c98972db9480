/**
 * Which `deno` runs plugin subprocesses (docs/architecture.md): `HERMES_DENO`, else the running binary when it is
 * deno itself (`deno run main.ts`), else `deno` on PATH (a `deno compile`d hermes is not deno).
 */
import { basename } from "../runtime/core/path.ts";
import { RunError } from "../runtime/core/errors.ts";

export function findDeno(env: Record<string, string>): string {
  if (env.HERMES_DENO) return env.HERMES_DENO;
  const self = Deno.execPath();
  if (/^deno(\.exe)?$/i.test(basename(self))) return self;
  for (const dir of (env.PATH ?? "").split(Deno.build.os === "windows" ? ";" : ":")) {
    if (!dir) continue;
    for (const name of Deno.build.os === "windows" ? ["deno.exe"] : ["deno"]) {
      try {
        if (Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
      } catch {
        // not here
      }
    }
  }
  throw new RunError(
    "Cannot start plugins: they run in deno subprocesses and no deno was found (set HERMES_DENO or put deno on PATH)",
  );
}

/** `findDeno`, or null where there is none (a caller that reports the absence in its own words). */
export function findDenoOrNull(env: Record<string, string>): string | null {
  try {
    return findDeno(env);
  } catch {
    return null;
  }
}

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
