/** SQLite rows ⇄ the store's records. */
import type { SQLInputValue } from "node:sqlite";
import type { MessageKind, Role } from "../../core/types.ts";
import type { TranscriptRow } from "../store.ts";
import { int } from "../_records.ts";

export { toMessage, toRunRow, toSession } from "../_records.ts";

/** The columns `toTranscriptRow` reads, in its order. */
export const TRANSCRIPT_COLUMNS =
  "id, seq, pos, role, kind, length(content), tool_calls, tool_call_id, name, prompt_tokens, completion_tokens";

/** A row selected as an array of TRANSCRIPT_COLUMNS (arrays are about a third faster to build than objects). */
export function toTranscriptRow(values: SQLInputValue[]): TranscriptRow {
  const [id, seq, pos, role, kind, chars, toolCalls, toolCallId, name, promptTokens, completionTokens] =
    values;
  const row: TranscriptRow = {
    id: Number(id),
    seq: Number(seq),
    pos: Number(pos),
    role: String(role) as Role,
    kind: String(kind) as MessageKind,
    chars: Number(chars),
    prompt_tokens: int(promptTokens),
    completion_tokens: int(completionTokens),
  };
  if (toolCalls !== null) row.tool_calls = JSON.parse(String(toolCalls));
  if (toolCallId !== null) row.tool_call_id = String(toolCallId);
  if (name !== null) row.name = String(name);
  return row;
}
