/**
 * The scheduled jobs of a folder as an operator sees them: each job's next slots (the daemon's own cron
 * computation, loops/daemon/cron_slots.ts, so the console and `hermes daemon` agree on every slot) and its
 * latest slot records from the store (success, failed, skipped, crashed, abandoned, or still running).
 */
import { ValidationError } from "../core/errors.ts";
import { jobFiles, loadScheduledJob, type ScheduledJob } from "../../loops/daemon/jobs.ts";
import type { RunRow, ScheduleStore } from "../store/store.ts";

export interface ScheduleOptions {
  /** The job files and folders to look in (a folder: the `*.yaml`/`*.yml` directly inside). */
  paths: readonly string[];
  /** How many coming slots per job (default 5). */
  next?: number;
  /** How many recorded slots per job, newest first (default 20). */
  last?: number;
}

export interface ScheduleSlot {
  /** The slot's time (epoch ms). */
  slot: number;
  status: string;
  session_id: string | null;
  claimed_at: number;
  finished_at: number | null;
  note: string | null;
}

export interface ScheduleView {
  name: string;
  /** The job file, absolute. */
  path: string;
  cron: string;
  timezone: string | null;
  catch_up: "one" | "none";
  overlap: "skip" | "queue" | "cancel_previous";
  /** The coming slots after now (epoch ms), soonest first. */
  next_slots: number[];
  /** The latest recorded slots, newest first. */
  last_slots: ScheduleSlot[];
}

/**
 * Job files as last loaded, by path, with their modification time (as the daemon notices edits): a page that
 * looks every few seconds parses and validates a file again only when it changed. Files that failed to load
 * are not kept (their error is read again each time).
 */
export type ScheduleCache = Map<string, { mtime: number; job: ScheduledJob | null }>;

export interface ScheduleReport {
  jobs: ScheduleView[];
  /** A job file that could not be read as a scheduled job: `FILE: why` (the others are still shown). */
  problems: string[];
}

export async function scheduleReport(
  store: ScheduleStore,
  options: ScheduleOptions,
  now: number,
  cache?: ScheduleCache,
): Promise<ScheduleReport> {
  const problems: string[] = [];
  const jobs: ScheduleView[] = [];
  const seen = new Map<string, string>();
  let files: { files: string[]; named: Set<string> };
  try {
    files = jobFiles(options.paths);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { jobs: [], problems: [error.message] };
  }
  for (const file of files.files) {
    let job;
    try {
      const mtime = Deno.statSync(file).mtime?.getTime() ?? 0;
      const cached = cache?.get(file);
      job = cached && cached.mtime === mtime ? cached.job : loadScheduledJob(file, files.named.has(file));
      cache?.set(file, { mtime, job });
    } catch (error) {
      cache?.delete(file);
      // One broken file does not hide the others; the daemon would refuse it with the same message.
      problems.push(error instanceof Error ? error.message : String(error));
      continue;
    }
    if (!job) continue;
    const clash = seen.get(job.name);
    if (clash) {
      problems.push(`${file}: job name "${job.name}" is also used by ${clash}`);
      continue;
    }
    seen.set(job.name, file);
    const next: number[] = [];
    for (let at = now; next.length < (options.next ?? 5);) {
      const slot = job.slots.nextAfter(at);
      if (slot === null) break;
      next.push(slot);
      at = slot;
    }
    const rows = await store.recentRuns(job.name, options.last ?? 20);
    jobs.push({
      name: job.name,
      path: job.path,
      cron: job.schedule.cron,
      timezone: job.slots.timezone,
      catch_up: job.catch_up,
      overlap: job.schedule.overlap ?? "skip",
      next_slots: next,
      last_slots: rows.map(slotOf),
    });
  }
  // Files gone from the folder leave the cache.
  for (const path of cache?.keys() ?? []) if (!files.files.includes(path)) cache?.delete(path);
  return { jobs: jobs.sort((a, b) => a.name.localeCompare(b.name)), problems };
}

function slotOf(row: RunRow): ScheduleSlot {
  // PostgreSQL hands BIGINT columns back as text.
  const ms = (value: number | null) => value === null ? null : Number(value);
  return {
    slot: Number(row.slot),
    status: row.status,
    session_id: row.session_id,
    claimed_at: Number(row.claimed_at),
    finished_at: ms(row.finished_at),
    note: row.note,
  };
}
