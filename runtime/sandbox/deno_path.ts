/**
 * Which `deno` runs Hermes's deno subprocesses — plugins, and the forwarder of a sandbox's network host list
 * (docs/architecture.md): `HERMES_DENO`, else the running binary when it is deno itself (`deno run main.ts`),
 * else `deno` on PATH (a `deno compile`d hermes is not deno).
 */
import { basename } from "../core/path.ts";
import { RunError } from "../core/errors.ts";

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
