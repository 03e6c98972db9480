/**
 * Stored rows → the store's records, for every implementation: a row is the column → value object a driver
 * returns (SQLite's numbers and 0/1, PostgreSQL's strings and booleans alike).
 */
import type { MessageKind, Role, SessionRow, SessionStatus, StoredMessage } from "../core/types.ts";
import type { CompactionKind, CompactionLogRow, PassOutcome, RunRow, StepRecord } from "./store.ts";
import type { PassTotals } from "./rules.ts";

type Record = { readonly [column: string]: unknown };

export const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);
export const int = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

export function toSession(row: Record): SessionRow {
  return {
    id: String(row.id),
    job: String(row.job),
    job_path: text(row.job_path),
    status: String(row.status) as SessionStatus,
    terminal_reason: text(row.terminal_reason),
    parent_id: text(row.parent_id),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    ended_at: int(row.ended_at),
    archived_at: int(row.archived_at),
    config_json: String(row.config_json),
    model: text(row.model),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    cached_tokens: Number(row.cached_tokens ?? 0),
    cache_write_tokens: Number(row.cache_write_tokens ?? 0),
    reasoning_tokens: Number(row.reasoning_tokens ?? 0),
    cost_usd: Number(row.cost_usd ?? 0),
    unpriced_calls: Number(row.unpriced_calls ?? 0),
    turns: Number(row.turns),
    owner_host: text(row.owner_host),
    owner_pid: int(row.owner_pid),
    owner_started: text(row.owner_started),
  };
}

export function toMessage(row: Record): StoredMessage {
  const message: StoredMessage = {
    id: Number(row.id),
    session_id: String(row.session_id),
    seq: Number(row.seq),
    pos: Number(row.pos),
    role: String(row.role) as Role,
    content: String(row.content),
    kind: String(row.kind) as MessageKind,
    // SQLite stores 0/1, PostgreSQL a boolean.
    active: row.active === true || Number(row.active) === 1,
    prompt_tokens: int(row.prompt_tokens),
    completion_tokens: int(row.completion_tokens),
    created_at: Number(row.created_at),
  };
  if (row.tool_calls !== null) message.tool_calls = JSON.parse(String(row.tool_calls));
  if (row.tool_call_id !== null) message.tool_call_id = String(row.tool_call_id);
  if (row.name !== null) message.name = String(row.name);
  if (row.reasoning !== null && row.reasoning !== undefined) {
    message.reasoning = JSON.parse(String(row.reasoning));
  }
  return message;
}

export function toStep(row: Record): StepRecord {
  return {
    session_id: String(row.session_id),
    step: Number(row.step),
    input: String(row.input),
    attempt: Number(row.attempt),
    message_seq: int(row.message_seq),
    status: String(row.status) as StepRecord["status"],
    started_at: Number(row.started_at),
    updated_at: Number(row.updated_at),
  };
}

export function toRunRow(row: Record): RunRow {
  return {
    job: String(row.job),
    slot: Number(row.slot),
    status: String(row.status),
    holder_host: text(row.holder_host),
    holder_pid: int(row.holder_pid),
    holder_started: text(row.holder_started),
    holder_nonce: text(row.holder_nonce),
    claimed_at: Number(row.claimed_at),
    lease_expires_at: int(row.lease_expires_at),
    finished_at: int(row.finished_at),
    session_id: text(row.session_id),
    note: text(row.note),
  };
}

/** The running totals a compaction log row carries. */
export function toTotals(row: Record): PassTotals {
  return {
    total_passes: Number(row.total_passes),
    total_committed: Number(row.total_committed),
    total_hard: Number(row.total_hard),
    total_saved_tokens: Number(row.total_saved_tokens),
  };
}

export function toLogRow(row: Record): CompactionLogRow {
  return {
    id: Number(row.id),
    session_id: String(row.session_id),
    kind: String(row.kind) as CompactionKind,
    reason: String(row.reason),
    outcome: String(row.outcome) as PassOutcome,
    before_tokens: Number(row.before_tokens),
    after_tokens: Number(row.after_tokens),
    messages_removed: Number(row.messages_removed),
    created_at: Number(row.created_at),
    detail: row.detail === null ? {} : JSON.parse(String(row.detail)),
    threshold_tokens: int(row.threshold_tokens),
    window_tokens: int(row.window_tokens),
    occupancy: int(row.occupancy),
    duration_ms: int(row.duration_ms),
    absorbed_messages: int(row.absorbed_messages),
    absorbed_tokens: int(row.absorbed_tokens),
    summary_tokens: int(row.summary_tokens),
    ...toTotals(row),
  };
}
