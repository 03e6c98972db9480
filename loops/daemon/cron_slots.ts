/** Slots of a `schedule:` (docs/job-file.md): croner, 5 fields or 6 with seconds, in the job's time zone. */
import type { Cron } from "croner";
import { compileCron } from "../../runtime/config/cron.ts";
import type { ScheduleConfig } from "../../runtime/config/job_schema.ts";

export interface SlotSchedule {
  readonly cron: string;
  readonly timezone: string | null;
  /** The first slot strictly after `time` (epoch ms), or null when there is none. */
  nextAfter(time: number): number | null;
  /** The latest slot at or before `time`, or null. */
  latestAtOrBefore(time: number): number | null;
}

/** Compiles a schedule; `where(key)` names the file, position and key for errors (`job.yaml:7:9: schedule.cron`). */
export function compileSchedule(
  schedule: ScheduleConfig,
  where: (key: "cron" | "timezone") => string,
): SlotSchedule {
  const timezone = schedule.timezone ?? null;
  const cron = compileCron(schedule, where);
  shareYearTable(cron);
  return {
    cron: schedule.cron,
    timezone,
    nextAfter: (time) => cron.nextRun(new Date(time))?.getTime() ?? null,
    // croner includes a run earlier in the reference's own second, so +1 ms makes `time` itself count.
    latestAtOrBefore: (time) => cron.previousRuns(1, new Date(time + 1))[0]?.getTime() ?? null,
  };
}

/**
 * croner keeps a 10 000-entry year table per pattern (80 KiB); with a wildcard year it is all ones, so
 * every schedule can share one read-only table. Checked shape first, so another croner layout is left alone.
 */
const ANY_YEAR: readonly number[] = Object.freeze(new Array<number>(10_000).fill(1));

function shareYearTable(cron: Cron): void {
  const pattern = (cron as unknown as { _states?: { pattern?: { starYear?: boolean; year?: number[] } } })
    ._states
    ?.pattern;
  const year = pattern?.year;
  if (pattern?.starYear && year?.length === ANY_YEAR.length && year.every((v) => v === 1)) {
    pattern.year = ANY_YEAR as number[];
  }
}
