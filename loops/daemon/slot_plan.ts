/**
 * Which slot a daemon claims: at start-up (catch-up of slots missed while no daemon ran) and when a job's
 * timer fires (coalescing slots missed while the process was late, e.g. a suspended machine).
 */

export type CatchUp =
  /** Nothing was missed (or the job has no history: it starts at its next slot). */
  | { action: "none" }
  /** A slot falls exactly on start-up: it is simply due. */
  | { action: "due"; slot: number }
  /** `catch_up: one`: run the most recent missed slot now. */
  | { action: "run"; slot: number }
  /** `catch_up: none`: record the most recent missed slot as skipped. */
  | { action: "skip"; slot: number };

export function catchUpPlan(input: {
  /** The job's latest slot at or before `now`. */
  latest: number | null;
  /** The latest slot with any row in the store for this job. */
  last_recorded: number | null;
  now: number;
  catch_up: "one" | "none";
}): CatchUp {
  const { latest, last_recorded } = input;
  if (latest === null) return { action: "none" };
  if (latest === input.now) return { action: "due", slot: latest };
  if (last_recorded === null || last_recorded >= latest) return { action: "none" };
  return input.catch_up === "one" ? { action: "run", slot: latest } : { action: "skip", slot: latest };
}

/**
 * The slot to claim for a job whose next slot `next` is due at `now`. Slots are whole seconds apart, so
 * one less than a second old is the latest; after a longer gap only the latest missed slot runs.
 */
export function dueSlot(
  next: number,
  now: number,
  latestAtOrBefore: (time: number) => number | null,
): number {
  return now - next < 1000 ? next : Math.max(next, latestAtOrBefore(now) ?? next);
}
