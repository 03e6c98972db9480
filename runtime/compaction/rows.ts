/**
 * What compaction planning reads of a transcript: the active rows without their content (sizes only, from the
 * store), each with its chars/4 estimate, so that choosing boundaries stays cheap on long sessions. Content is
 * loaded only for what is summarised.
 */
import type { SessionStore, TranscriptRow } from "../store/store.ts";
import type { StoredMessage, ToolCall } from "../core/types.ts";

export interface PlanRow extends TranscriptRow {
  /** chars/4 of the row as sent: content and tool calls. */
  tokens: number;
}

/** The session's active rows in prompt order (the order `store.activeMessages` uses). */
export async function loadPlanRows(store: SessionStore, sessionId: string): Promise<PlanRow[]> {
  // The store hands out fresh rows: they get their estimate in place (a copy per row costs a tenth of a
  // millisecond per thousand rows, on a path that runs between every two turns with micro-compaction).
  const rows = await store.transcriptRows(sessionId) as PlanRow[];
  for (const row of rows) row.tokens = tokensOf(row.chars, row.tool_calls);
  return rows;
}

/** Σ chars/4 of rows as the store gives them, without building plan rows. */
export function sumTokens(rows: readonly TranscriptRow[]): number {
  let total = 0;
  for (const row of rows) total += tokensOf(row.chars, row.tool_calls);
  return total;
}

/** Rows as the store gives them, each with its token estimate. */
export function withTokens(rows: readonly TranscriptRow[]): PlanRow[] {
  return rows.map((row) => ({ ...row, tokens: tokensOf(row.chars, row.tool_calls) }));
}

export function toPlanRow(m: StoredMessage): PlanRow {
  const row: PlanRow = {
    id: m.id,
    seq: m.seq,
    pos: m.pos,
    role: m.role,
    kind: m.kind,
    chars: m.content.length,
    tokens: 0,
    prompt_tokens: m.prompt_tokens,
    completion_tokens: m.completion_tokens,
  };
  if (m.tool_calls?.length) row.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) row.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) row.name = m.name;
  row.tokens = tokensOf(row.chars, row.tool_calls);
  return row;
}

/** chars/4 of a content length plus tool calls. */
export function tokensOf(chars: number, toolCalls?: readonly ToolCall[]): number {
  for (const call of toolCalls ?? []) chars += call.id.length + call.name.length + call.arguments.length;
  return Math.ceil(chars / 4);
}
