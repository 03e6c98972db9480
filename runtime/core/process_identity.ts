/** Who holds a lease or a claim: enough to prove, on this host, that the holder is dead. */
export interface ProcessIdentity {
  host: string;
  pid: number;
  /** Kernel start time of the process (clock ticks since boot), so a recycled pid is told apart. */
  started: string;
  nonce: string;
}

/** Start time of `pid` from /proc, or null when the process does not exist (or /proc is absent). */
export function processStartTime(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // Field 2 (comm) may contain spaces and parentheses; fields after the last ')' are fixed.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * This process under a fresh nonce, named `host` in holders and owners. The CLI passes the host name its
 * configuration chose (HERMES_HOST_ID, else the hostname); without one, the hostname.
 */
export function currentProcess(host: string = Deno.hostname()): ProcessIdentity {
  return {
    host,
    pid: Deno.pid,
    started: processStartTime(Deno.pid) ?? "unknown",
    nonce: crypto.randomUUID(),
  };
}

/**
 * True only when the holder is provably gone: on `host` (the host this process runs on, as it names itself
 * in holders), and its pid is absent or now belongs to a process that started at another time. A holder on
 * another host is never provably dead.
 */
export function isProvablyDead(
  holder: { host: string; pid: number; started: string },
  host: string,
): boolean {
  if (holder.host !== host) return false;
  const started = processStartTime(holder.pid);
  if (started === null) {
    try {
      Deno.statSync("/proc/self/stat");
    } catch {
      return false; // no /proc: cannot prove anything
    }
    return true;
  }
  return holder.started !== "unknown" && started !== holder.started;
}
