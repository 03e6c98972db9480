/** The ids the store gives what it keeps: time-sortable and unique, each kind with its own form. */

/** A session id: `YYYYMMDD-HHMMSS-xxxxxx`. */
export function newSessionId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `${stamp}-${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 6)}`;
}

/** A run id: time-sortable like session ids, with an `r` so the two are never confused. */
export function newRunId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const random = crypto.getRandomValues(new Uint8Array(5));
  return `r${stamp}-${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 8)}`;
}

/** A new approval's id: time-sortable like run ids, with an `a`. */
export function newApprovalId(now: number): string {
  return `a${newRunId(now).slice(1)}`;
}
