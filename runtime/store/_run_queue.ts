/**
 * What the run queue's two implementations share that is not SQL: the record of a stored row, when a
 * worker counts as gone, what becomes of its run (on_crash), and how a claim batch respects group limits.
 */
import { isProvablyDead, type ProcessIdentity } from "../core/process_identity.ts";
import { NotFoundError } from "../core/errors.ts";
import type {
  Approval,
  ApprovalStatus,
  QueuedRun,
  QueuedRunStatus,
  RunDelivery,
  RunTrigger,
} from "./store.ts";
import { int, text } from "./_records.ts";

type Record = { readonly [column: string]: unknown };

function json(value: unknown, fallback: unknown): unknown {
  if (value === null || value === undefined) return fallback;
  return typeof value === "string" ? JSON.parse(value) : value;
}

export function toQueuedRun(row: Record): QueuedRun {
  const holder: ProcessIdentity | null = row.holder_nonce == null ? null : {
    host: String(row.holder_host ?? ""),
    pid: Number(row.holder_pid),
    started: row.holder_started == null ? "unknown" : String(row.holder_started),
    nonce: String(row.holder_nonce),
  };
  return {
    id: String(row.id),
    job: String(row.job),
    job_path: text(row.job_path),
    job_snapshot: String(row.job_snapshot),
    inputs: json(row.inputs, {}) as Record & { [name: string]: string },
    key: text(row.key),
    priority: Number(row.priority),
    not_before: int(row.not_before),
    // A running run with a pending approval shows so (the column is read by the public reads alone).
    status: row.status === "running" && (row.waiting_approval === true || Number(row.waiting_approval) === 1)
      ? "waiting_approval"
      : String(row.status) as QueuedRunStatus,
    attempts: Number(row.attempts),
    on_crash: row.on_crash === "rerun" ? "rerun" : "skip",
    group: text(row.group_key),
    group_limit: int(row.group_limit),
    model: text(row.model),
    labels: json(row.labels, {}) as { [name: string]: string },
    pinned_to: text(row.pinned_to),
    trigger: (row.triggered_by == null ? "cli" : String(row.triggered_by)) as RunTrigger,
    holder,
    lease_expires_at: int(row.lease_expires_at),
    cancel_requested: row.cancel_requested === true || Number(row.cancel_requested) === 1,
    session_id: text(row.session_id),
    result: json(row.result, null),
    exit_code: int(row.exit_code),
    note: text(row.note),
    submitted_at: Number(row.submitted_at),
    started_at: int(row.started_at),
    finished_at: int(row.finished_at),
  };
}

/** A running run whose worker is provably dead on `host`, or silent past its lease. */
export function isStaleRun(run: QueuedRun, at: { now: number; host: string }): boolean {
  if (run.status !== "running" || !run.holder) return false;
  if ((run.lease_expires_at ?? 0) < at.now) return true;
  return isProvablyDead(run.holder, at.host);
}

/** What becomes of a stale run: queued again once (`on_crash: rerun`), otherwise crashed. */
export function recovery(run: QueuedRun): { status: "queued" | "crashed"; note: string } {
  const who = run.holder ? `${run.holder.host}:${run.holder.pid}` : "its worker";
  if (run.on_crash === "rerun" && run.attempts < 2) {
    return { status: "queued", note: `worker ${who} stopped mid-run; queued again once (on_crash: rerun)` };
  }
  const why = run.attempts >= 2
    ? "after it was taken over once; not run again"
    : "not run again (on_crash: skip)";
  return { status: "crashed", note: `worker ${who} stopped mid-run ${why}` };
}

/**
 * Picks runs of `candidates` (in claim order) to claim: at most `max`, no group beyond its limit counting
 * what runs already (`running(group)`) and what this batch took, no more than `room` in all.
 */
export function pickClaims(
  candidates: readonly QueuedRun[],
  options: { max: number; room: number; running: (group: string) => number },
): QueuedRun[] {
  const picked: QueuedRun[] = [];
  const taken = new Map<string, number>();
  const limit = Math.min(options.max, options.room);
  for (const run of candidates) {
    if (picked.length >= limit) break;
    if (run.group !== null && run.group_limit !== null) {
      const now = taken.get(run.group) ?? options.running(run.group);
      if (now >= run.group_limit) {
        taken.set(run.group, now);
        continue;
      }
      taken.set(run.group, now + 1);
    }
    picked.push(run);
  }
  return picked;
}

/** `resolveRunId`'s answer from the exact match and up to two ids with the prefix. */
export function resolvedRunId(ref: string, exact: boolean, prefixed: readonly string[]): string {
  if (exact) return ref;
  if (prefixed.length === 1) return prefixed[0]!;
  if (prefixed.length > 1) {
    throw new NotFoundError(`Cannot find run "${ref}": the prefix is ambiguous (${prefixed.join(", ")}, …)`);
  }
  throw new NotFoundError(`Cannot find run "${ref}": no such run id`);
}

/** The statuses a run ends in. */
export const ENDED: readonly QueuedRunStatus[] = [
  "success",
  "failed",
  "limit",
  "interrupted",
  "cancelled",
  "crashed",
];

export function toDelivery(row: Record): RunDelivery {
  return {
    id: String(row.id),
    run_id: String(row.run_id),
    target: String(row.target),
    event: String(row.event),
    status: String(row.status) as RunDelivery["status"],
    attempts: Number(row.attempts),
    response_status: int(row.response_status),
    error: text(row.error),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

export function toApproval(row: Record): Approval {
  return {
    id: String(row.id),
    run_id: text(row.run_id),
    session_id: String(row.session_id),
    job: String(row.job),
    tool: String(row.tool),
    tool_call_id: String(row.tool_call_id),
    server: text(row.server),
    arguments: json(row.arguments, {}) as Approval["arguments"],
    subject: text(row.subject),
    reason: String(row.reason),
    rule: String(row.rule),
    status: String(row.status) as ApprovalStatus,
    decision_reason: text(row.decision_reason),
    decided_by: text(row.decided_by),
    created_at: Number(row.created_at),
    expires_at: Number(row.expires_at),
    decided_at: int(row.decided_at),
  };
}
