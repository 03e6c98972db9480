/** Row mapping for the store: SQLite rows ⇄ SessionRow / StoredMessage, and session ids. */
import type { SQLInputValue } from "node:sqlite";
import type { MessageKind, SessionRow, SessionStatus, StoredMessage } from "../core/types.ts";

export type Row = Record<string, SQLInputValue>;

/** Time-sortable, unique session ids: `YYYYMMDD-HHMMSS-xxxxxx`. */
export function newSessionId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `${stamp}-${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 6)}`;
}

export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

export function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function toSession(row: Row): SessionRow {
  return {
    id: String(row.id),
    job: String(row.job),
    job_path: row.job_path === null ? null : String(row.job_path),
    status: String(row.status) as SessionStatus,
    terminal_reason: row.terminal_reason === null ? null : String(row.terminal_reason),
    parent_id: row.parent_id === null ? null : String(row.parent_id),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    ended_at: row.ended_at === null ? null : Number(row.ended_at),
    archived_at: row.archived_at === null ? null : Number(row.archived_at),
    config_json: String(row.config_json),
    model: row.model === null ? null : String(row.model),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    turns: Number(row.turns),
    owner_host: row.owner_host === null ? null : String(row.owner_host),
    owner_pid: row.owner_pid === null ? null : Number(row.owner_pid),
    owner_started: row.owner_started === null ? null : String(row.owner_started),
  };
}

export function toMessage(row: Row): StoredMessage {
  const message: StoredMessage = {
    id: Number(row.id),
    session_id: String(row.session_id),
    seq: Number(row.seq),
    pos: Number(row.pos),
    role: String(row.role) as StoredMessage["role"],
    content: String(row.content),
    kind: String(row.kind) as MessageKind,
    active: Number(row.active) === 1,
    prompt_tokens: row.prompt_tokens === null ? null : Number(row.prompt_tokens),
    completion_tokens: row.completion_tokens === null ? null : Number(row.completion_tokens),
    created_at: Number(row.created_at),
  };
  if (row.tool_calls !== null) message.tool_calls = JSON.parse(String(row.tool_calls));
  if (row.tool_call_id !== null) message.tool_call_id = String(row.tool_call_id);
  if (row.name !== null) message.name = String(row.name);
  return message;
}
