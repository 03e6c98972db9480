/** PostgreSQL rows ⇄ the store's records, and the column lists several queries share. */
import type { ProcessIdentity } from "../../core/process_identity.ts";
import type { MessageKind, Role } from "../../core/types.ts";
import type { Lease, TranscriptRow } from "../store.ts";
import type { Q, Row } from "./_db.ts";
import { int } from "../_records.ts";

export { toMessage, toRunRow, toSession } from "../_records.ts";

/** The columns `toMessage` reads (not the search vector). */
export const messageColumns = (q: Q) =>
  q`id, session_id, seq, pos, role, content, tool_calls, tool_call_id, name, kind, active, prompt_tokens,
    completion_tokens, created_at, reasoning`;

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
