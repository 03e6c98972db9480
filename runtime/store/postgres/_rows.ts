/** PostgreSQL rows ⇄ the store's records, and the column lists several queries share. */
import type { ProcessIdentity } from "../../core/process_identity.ts";
import type { MessageKind, Role, SessionRow, SessionStatus, StoredMessage } from "../../core/types.ts";
import type { Lease, RunRow, TranscriptRow } from "../store.ts";
import type { Q, Row } from "./_db.ts";

const text = (value: unknown) => value === null || value === undefined ? null : String(value);
const int = (value: unknown) => value === null || value === undefined ? null : Number(value);

export function toSession(row: Row): SessionRow {
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
    turns: Number(row.turns),
    owner_host: text(row.owner_host),
    owner_pid: int(row.owner_pid),
    owner_started: text(row.owner_started),
  };
}

/** The columns `toMessage` reads (not the search vector). */
export const messageColumns = (q: Q) =>
  q`id, session_id, seq, pos, role, content, tool_calls, tool_call_id, name, kind, active, prompt_tokens,
    completion_tokens, created_at`;

export function toMessage(row: Row): StoredMessage {
  const message: StoredMessage = {
    id: Number(row.id),
    session_id: String(row.session_id),
    seq: Number(row.seq),
    pos: Number(row.pos),
    role: String(row.role) as Role,
    content: String(row.content),
    kind: String(row.kind) as MessageKind,
    active: row.active === true,
    prompt_tokens: int(row.prompt_tokens),
    completion_tokens: int(row.completion_tokens),
    created_at: Number(row.created_at),
  };
  if (row.tool_calls !== null) message.tool_calls = JSON.parse(String(row.tool_calls));
  if (row.tool_call_id !== null) message.tool_call_id = String(row.tool_call_id);
  if (row.name !== null) message.name = String(row.name);
  return message;
}

/** The columns `toTranscriptRow` reads: a row without its content, its size in characters instead. */
export const transcriptColumns = (q: Q) =>
  q`id, seq, pos, role, kind, length(content) AS chars, tool_calls, tool_call_id, name, prompt_tokens,
    completion_tokens`;

export function toTranscriptRow(row: Row): TranscriptRow {
  const result: TranscriptRow = {
    id: Number(row.id),
    seq: Number(row.seq),
    pos: Number(row.pos),
    role: String(row.role) as Role,
    kind: String(row.kind) as MessageKind,
    chars: Number(row.chars),
    prompt_tokens: int(row.prompt_tokens),
    completion_tokens: int(row.completion_tokens),
  };
  if (row.tool_calls !== null) result.tool_calls = JSON.parse(String(row.tool_calls));
  if (row.tool_call_id !== null) result.tool_call_id = String(row.tool_call_id);
  if (row.name !== null) result.name = String(row.name);
  return result;
}

/** The identity in a row's `holder_*` (leases, runs) or `owner_*` (sessions) columns. */
export function readIdentity(row: Row, prefix: "holder" | "owner"): ProcessIdentity {
  return {
    host: String(row[`${prefix}_host`] ?? ""),
    pid: Number(row[`${prefix}_pid`]),
    started: row[`${prefix}_started`] == null ? "unknown" : String(row[`${prefix}_started`]),
    nonce: prefix === "holder" ? String(row.holder_nonce ?? "") : "",
  };
}

export function toLease(row: Row): Lease {
  return {
    session_id: String(row.session_id),
    holder: readIdentity(row, "holder"),
    acquired_at: Number(row.acquired_at),
    expires_at: Number(row.expires_at),
  };
}

export function toRunRow(row: Row): RunRow {
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
