/**
 * `schedule.max_cost_usd_per_day`: what a job's runs spent since the start of the day (in the schedule's time
 * zone) is summed from the store, so every daemon on the store counts the same spend. A run starts only while
 * some of the day's budget is left, and gets what is left as its `limits.max_cost_usd`.
 */
import type { ResolvedJob } from "../../runtime/config/job.ts";
import { formatUsd, roundUsd } from "../../runtime/core/usd.ts";
import type { Store } from "../../runtime/store/store.ts";

export type DailyBudget =
  | { run: true; job: ResolvedJob; spent: number; left: number }
  | { run: false; spent: number; note: string };

export async function dailyBudget(
  job: ResolvedJob,
  store: Pick<Store, "jobSpend">,
  now: number,
): Promise<DailyBudget | null> {
  const schedule = job.spec.schedule;
  const cap = schedule?.max_cost_usd_per_day;
  if (cap === undefined) return null;
  const spent = roundUsd(await store.jobSpend(job.spec.name, dayStart(now, schedule?.timezone)));
  const left = roundUsd(cap - spent);
  if (left <= 0) {
    return {
      run: false,
      spent,
      note: `not run: the job spent ${formatUsd(spent)} today, schedule.max_cost_usd_per_day is ${
        formatUsd(cap)
      }`,
    };
  }
  const limit = Math.min(job.spec.limits?.max_cost_usd ?? Infinity, left);
  return {
    run: true,
    spent,
    left,
    job: { ...job, spec: { ...job.spec, limits: { ...job.spec.limits, max_cost_usd: limit } } },
  };
}

/** Epoch ms of the midnight that began the day `at` falls in, in `timeZone` (default: the machine's). */
export function dayStart(at: number, timeZone?: string): number {
  const local = wallClock(at, timeZone);
  const midnight = Date.UTC(local.year, local.month - 1, local.day);
  // The wall clock runs ahead of UTC by the zone's offset; twice, for a day whose offset changes by then.
  let start = midnight - offsetAt(midnight, timeZone);
  start = midnight - offsetAt(start, timeZone);
  return start;
}

function offsetAt(at: number, timeZone: string | undefined): number {
  const w = wallClock(at, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(at / 1000) * 1000;
}

function wallClock(at: number, timeZone: string | undefined) {
  const parts = new Intl.DateTimeFormat("en-US", {
    ...(timeZone ? { timeZone } : {}),
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return {
    year: get("year"),
    month: get("month"),
    day: get("day"),
    hour: get("hour") % 24,
    minute: get("minute"),
    second: get("second"),
  };
}
