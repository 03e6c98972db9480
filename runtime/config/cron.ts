/**
 * A job's `schedule:` compiled by croner. Its own module, imported only where a schedule is checked or
 * run: croner is an npm package, and the first one a process loads sets up Deno's npm layer.
 */
import { Cron } from "croner";
import { ValidationError } from "../core/errors.ts";
import type { ScheduleConfig } from "./job_schema.ts";

export type CronCompiler = typeof compileCron;

/** croner, 5 fields or 6 with seconds, in the schedule's IANA time zone; `where(key)` prefixes errors. */
export function compileCron(schedule: ScheduleConfig, where: (key: "cron" | "timezone") => string): Cron {
  const timezone = schedule.timezone ?? null;
  if (timezone !== null) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: timezone });
    } catch {
      throw new ValidationError(
        `${where("timezone")}: unknown time zone "${timezone}" (expected an IANA name like Europe/Paris)`,
      );
    }
  }
  try {
    return new Cron(schedule.cron, { mode: "5-or-6-parts", ...(timezone ? { timezone } : {}) });
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, "");
    throw new ValidationError(
      `${
        where("cron")
      }: invalid cron "${schedule.cron}": ${reason} (expected 5 fields, or 6 with seconds first)`,
    );
  }
}
