/** The job files a daemon serves: `hermes daemon [JOB.yaml | DIR]...`, the ones with a `schedule:`. */
import { resolve } from "../../runtime/core/path.ts";
import { LineCounter, parseDocument } from "../../runtime/core/yaml.ts";
import { ValidationError } from "../../runtime/core/errors.ts";
import { loadJob } from "../../runtime/config/job_file.ts";
import type { ScheduleConfig } from "../../runtime/config/job_schema.ts";
import { compileSchedule, type SlotSchedule } from "./cron_slots.ts";

export interface ScheduledJob {
  name: string;
  /** Absolute path of the job file. */
  path: string;
  schedule: ScheduleConfig;
  slots: SlotSchedule;
  catch_up: "one" | "none";
  /** Modification time when loaded, to notice edits. */
  mtime: number;
}

/** The job files under `paths`: files as given, and `*.yaml`/`*.yml` directly inside directories. */
export function jobFiles(paths: readonly string[]): { files: string[]; named: Set<string> } {
  const files = new Set<string>();
  const named = new Set<string>();
  for (const given of paths) {
    const path = resolve(given);
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch {
      throw new ValidationError(`Cannot read "${given}": no such file or directory`);
    }
    if (info.isDirectory) {
      for (const entry of Deno.readDirSync(path)) {
        if (entry.isFile && /\.ya?ml$/.test(entry.name)) files.add(`${path}/${entry.name}`);
      }
    } else {
      files.add(path);
      named.add(path);
    }
  }
  return { files: [...files].sort(), named };
}

/**
 * Loads one job file; null for a file found in a directory without a top-level `schedule` (other jobs,
 * scripted replies, configs). A file named on the command line without a schedule is an error.
 */
export function loadScheduledJob(path: string, named: boolean): ScheduledJob | null {
  const mtime = Deno.statSync(path).mtime?.getTime() ?? 0;
  if (!named && !hasScheduleKey(path)) return null; // replies, configs and unscheduled jobs share directories
  const { spec } = loadJob(path, { validateOnly: true });
  if (!spec.schedule) {
    if (!named) return null;
    throw new ValidationError(
      `${path}: job "${spec.name}" has no schedule (add schedule: {cron: "…"} to run it in the daemon)`,
    );
  }
  return {
    name: spec.name,
    path,
    schedule: spec.schedule,
    slots: compileSchedule(
      spec.schedule,
      (key) => `${keyPosition(path, ["schedule", key])}: schedule.${key}`,
    ),
    catch_up: spec.schedule.catch_up ?? "one",
    mtime,
  };
}

/** Loads every scheduled job under `paths`; job names must be unique. */
export function loadScheduledJobs(paths: readonly string[]): ScheduledJob[] {
  const { files, named } = jobFiles(paths);
  const jobs = new Map<string, ScheduledJob>();
  for (const file of files) {
    const job = loadScheduledJob(file, named.has(file));
    if (!job) continue;
    const clash = jobs.get(job.name);
    if (clash) throw new ValidationError(`${file}: job name "${job.name}" is also used by ${clash.path}`);
    jobs.set(job.name, job);
  }
  return [...jobs.values()];
}

/** `file:line:col` of a key's value, for errors found after schema validation. */
function keyPosition(path: string, keyPath: string[]): string {
  const lines = new LineCounter();
  const doc = parseDocument(Deno.readTextFileSync(path), { lineCounter: lines });
  const node = doc.getIn(keyPath, true) as { range?: [number, number, number] } | undefined;
  const at = node?.range ? lines.linePos(node.range[0]) : undefined;
  return at ? `${path}:${at.line}:${at.col}` : path;
}

/** True when the file has a top-level `schedule:` key (block style, as job files are written). */
function hasScheduleKey(path: string): boolean {
  return /^["']?schedule["']?[ \t]*:/m.test(Deno.readTextFileSync(path));
}
