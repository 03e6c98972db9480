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
 * The name of this host in holders and owners: HERMES_HOST_ID when set (several hosts simulated on one
 * machine, or a stable name for a container whose hostname changes), else the hostname. Read from the process
 * environment like the hostname itself: it is a fact about the process, the same for every caller.
 */
export function thisHost(): string {
  return Deno.env.get("HERMES_HOST_ID") || Deno.hostname();
}

export function currentProcess(): ProcessIdentity {
  return {
    host: thisHost(),
    pid: Deno.pid,
    started: processStartTime(Deno.pid) ?? "unknown",
    nonce: crypto.randomUUID(),
  };
}

/**
 * True only when the holder is provably gone: same host, and its pid is absent or now belongs to a
 * process that started at another time. A holder on another host is never provably dead.
 */
export function isProvablyDead(holder: { host: string; pid: number; started: string }): boolean {
  if (holder.host !== thisHost()) return false;
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
