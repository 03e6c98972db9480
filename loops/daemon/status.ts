/**
 * `hermes daemon status`: which daemons run (a small file per daemon under HOME/daemons), their jobs with
 * next slots, and the last runs from the store.
 */
import { isProvablyDead, type ProcessIdentity } from "../../runtime/core/process_identity.ts";
import type { RunRow, ScheduleStore } from "../../runtime/store/store.ts";
import type { ScheduledJob } from "./jobs.ts";

export interface DaemonRecord {
  host: string;
  pid: number;
  started: string;
  started_at: string;
  /** The job files and directories it serves, absolute. */
  paths: string[];
}

/** Writes this daemon's record; returns a function that removes it. */
export function registerDaemon(
  home: string,
  identity: ProcessIdentity,
  paths: string[],
  now: number,
): () => void {
  const dir = `${home}/daemons`;
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = `${dir}/${identity.host}-${identity.pid}.json`;
  const record: DaemonRecord = {
    host: identity.host,
    pid: identity.pid,
    started: identity.started,
    started_at: new Date(now).toISOString(),
    paths,
  };
  Deno.writeTextFileSync(file, JSON.stringify(record) + "\n", { mode: 0o600 });
  return () => {
    try {
      Deno.removeSync(file);
    } catch {
      // already gone
    }
  };
}

/**
 * Records of daemons that may be running; records of daemons provably dead on `host` (this host, as
 * holders name it) are removed.
 */
export function liveDaemons(home: string, host: string): DaemonRecord[] {
  const records: DaemonRecord[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(`${home}/daemons`)];
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!entry.name.endsWith(".json")) continue;
    const file = `${home}/daemons/${entry.name}`;
    try {
      const record = JSON.parse(Deno.readTextFileSync(file)) as DaemonRecord;
      if (isProvablyDead(record, host)) Deno.removeSync(file);
      else records.push(record);
    } catch {
      // a record being written or removed right now
    }
  }
  return records.sort((a, b) => a.started_at.localeCompare(b.started_at));
}

export interface JobStatus {
  name: string;
  path: string;
  cron: string;
  timezone: string | null;
  catch_up: "one" | "none";
  /** `schedule.overlap`: what a slot due while the previous run goes on does. */
  overlap: "skip" | "queue" | "cancel_previous";
  next_slot: string | null;
  last_runs: RunSummary[];
}

export interface RunSummary {
  slot: string;
  status: string;
  session_id: string | null;
  holder: string | null;
  claimed_at: string;
  finished_at: string | null;
  note: string | null;
}

export async function jobStatus(
  store: ScheduleStore,
  job: ScheduledJob,
  now: number,
  runs = 5,
): Promise<JobStatus> {
  const next = job.slots.nextAfter(now);
  return {
    name: job.name,
    path: job.path,
    cron: job.schedule.cron,
    timezone: job.slots.timezone,
    catch_up: job.catch_up,
    overlap: job.schedule.overlap ?? "skip",
    next_slot: next === null ? null : new Date(next).toISOString(),
    last_runs: (await store.recentRuns(job.name, runs)).map(summary),
  };
}

function summary(row: RunRow): RunSummary {
  const iso = (ms: number | null) => ms === null ? null : new Date(Number(ms)).toISOString();
  return {
    slot: iso(row.slot)!,
    status: row.status,
    session_id: row.session_id,
    holder: row.holder_host === null ? null : `${row.holder_host}:${row.holder_pid}`,
    claimed_at: iso(row.claimed_at)!,
    finished_at: iso(row.finished_at),
    note: row.note,
  };
}

export function formatStatus(daemons: DaemonRecord[], jobs: JobStatus[]): string {
  const lines: string[] = [];
  if (daemons.length === 0) lines.push("No daemon is running.");
  for (const d of daemons) {
    lines.push(`daemon ${d.host}:${d.pid} since ${d.started_at} serving ${d.paths.join(", ")}`);
  }
  if (jobs.length === 0) lines.push("No scheduled jobs.");
  for (const job of jobs) {
    const zone = job.timezone ? ` (${job.timezone})` : "";
    lines.push(
      "",
      `${job.name}  ${job.cron}${zone}  catch_up: ${job.catch_up}  overlap: ${job.overlap}  ${job.path}`,
    );
    lines.push(`  next: ${job.next_slot ?? "never"}`);
    if (job.last_runs.length === 0) lines.push("  no runs yet");
    for (const run of job.last_runs) {
      const session = run.session_id ? `  session ${run.session_id}` : "";
      const note = run.note ? `  (${run.note})` : "";
      // Which host (and pid) ran the slot: with several daemons on one PostgreSQL store, any of them may.
      const holder = run.holder ? `  by ${run.holder}` : "";
      lines.push(`  ${run.slot}  ${run.status}${holder}${session}${note}`);
    }
  }
  return lines.join("\n");
}
