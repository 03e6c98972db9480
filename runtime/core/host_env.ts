/**
 * The host process environment: Hermes's own environment as config loading captured it. Every program
 * Hermes itself starts on the host — the deno of a sandbox's network bridge, the approval command, and any
 * later host-side command (hooks, notifications) — is found and started from this, never from a job's
 * `env:`, which is the job's to give to the commands it runs and would otherwise steer the host's programs
 * (a `PATH`, `BASH_ENV`, `LD_PRELOAD` or `HERMES_DENO` of the job's choosing).
 */

/** Hermes's own environment (never merged with a job's `env:`). */
export type HostEnv = Readonly<Record<string, string>>;

/** What a host program gets of Hermes's environment: enough to run, no credentials. */
const HOST_PROGRAM_NAMES = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL"];

/**
 * The environment a host program Hermes starts runs with: the few names of `host` a program needs to run
 * (never a credential of Hermes's), and a fixed PATH when Hermes has none (bash's built-in default includes
 * ".", which would let a file in the working directory shadow a command).
 */
export function hostProgramEnv(host: HostEnv): Record<string, string> {
  const out: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin" };
  for (const name of HOST_PROGRAM_NAMES) if (host[name] !== undefined) out[name] = host[name]!;
  return out;
}
