/** Re-reading a daemon's job files after an edit: only changed files are parsed again. */
import { errorMessage } from "../../runtime/core/errors.ts";
import type { Logger } from "../../runtime/core/log.ts";
import { jobFiles, loadScheduledJob, type ScheduledJob } from "./jobs.ts";

export interface ScheduledEntry {
  job: ScheduledJob;
  /** The next slot to claim (epoch ms), or null when the schedule has none. */
  next: number | null;
}

/**
 * The entries after re-reading `paths`: unchanged files keep their entry, an edited schedule starts at
 * its next slot after `now`, a broken edit keeps the previous version (and is logged), removed files and
 * schedules drop out. Null when the paths cannot be listed at all (nothing changes then).
 */
export function reloadJobs(
  current: ReadonlyMap<string, ScheduledEntry>,
  paths: readonly string[],
  now: number,
  log: Logger,
): Map<string, ScheduledEntry> | null {
  let listing: ReturnType<typeof jobFiles>;
  try {
    listing = jobFiles(paths);
  } catch (error) {
    log.error(`cannot reload job files: ${errorMessage(error)}`);
    return null;
  }
  const byPath = new Map([...current.values()].map((e) => [e.job.path, e]));
  const next = new Map<string, ScheduledEntry>();
  const add = (entry: ScheduledEntry) => {
    const clash = next.get(entry.job.name);
    if (clash) {
      log.error(`${entry.job.path}: job name "${entry.job.name}" is also used by ${clash.job.path}; ignored`);
    } else next.set(entry.job.name, entry);
  };
  for (const file of listing.files) {
    const previous = byPath.get(file);
    let mtime: number;
    try {
      mtime = Deno.statSync(file).mtime?.getTime() ?? 0;
    } catch {
      continue; // deleted between listing and stat
    }
    if (previous && previous.job.mtime === mtime) {
      add(previous);
      continue;
    }
    let job: ScheduledJob | null;
    try {
      job = loadScheduledJob(file, listing.named.has(file));
    } catch (error) {
      log.error(`${errorMessage(error)}${previous ? " (keeping the previous version)" : ""}`);
      if (previous) add(previous);
      continue;
    }
    if (!job) continue;
    const old = current.get(job.name);
    const same = old?.job.schedule.cron === job.schedule.cron &&
      old?.job.schedule.timezone === job.schedule.timezone;
    add({ job, next: same ? old!.next : job.slots.nextAfter(now) });
    log.info(`${job.name}: ${old ? "reloaded" : "loaded"} ${file}`);
  }
  for (const name of current.keys()) if (!next.has(name)) log.info(`${name}: no longer scheduled`);
  return next;
}
