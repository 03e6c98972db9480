/** Session ids: time-sortable and unique, `YYYYMMDD-HHMMSS-xxxxxx`. */
export function newSessionId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `${stamp}-${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 6)}`;
}
