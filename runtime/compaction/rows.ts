/**
 * What compaction planning reads of a transcript: the active rows without their content (sizes only), so that
 * estimating and choosing boundaries stays cheap on long sessions. Content is loaded only for what is summarised.
 */
import type { SQLInputValue } from "node:sqlite";
import type { Store } from "../store/store.ts";
import type { MessageKind, Role, StoredMessage, ToolCall } from "../core/types.ts";

export interface PlanRow {
  id: number;
  seq: number;
  pos: number;
  role: Role;
  kind: MessageKind;
  /** Characters of the content. */
  chars: number;
  /** chars/4 of the row as sent: content and tool calls. */
  tokens: number;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

type Row = Record<string, SQLInputValue>;

/** The session's active rows in prompt order (the order `store.activeMessages` uses). */
export function loadPlanRows(store: Store, sessionId: string): PlanRow[] {
  const statement = store.stmt(
    `SELECT id, seq, pos, role, kind, length(content), tool_calls, tool_call_id, name, prompt_tokens,
       completion_tokens FROM messages WHERE session_id = ? AND active = 1 ORDER BY pos, seq`,
  );
  // Arrays instead of objects (about a third faster): this runs before every model call, on sessions of any
  // length. Deno 2.9's node:sqlite has the method; its type declarations do not yet.
  (statement as typeof statement & { setReturnArrays(enabled: boolean): void }).setReturnArrays(true);
  const rows = statement.all(sessionId) as unknown as SQLInputValue[][];
  return rows.map(
    ([id, seq, pos, role, kind, chars, toolCalls, toolCallId, name, promptTokens, completionTokens]) => {
      const row: PlanRow = {
        id: Number(id),
        seq: Number(seq),
        pos: Number(pos),
        role: String(role) as Role,
        kind: String(kind) as MessageKind,
        chars: Number(chars),
        tokens: 0,
        prompt_tokens: promptTokens === null ? null : Number(promptTokens),
        completion_tokens: completionTokens === null ? null : Number(completionTokens),
      };
      if (toolCalls !== null) row.tool_calls = JSON.parse(String(toolCalls));
      if (toolCallId !== null) row.tool_call_id = String(toolCallId);
      if (name !== null) row.name = String(name);
      row.tokens = tokensOf(row.chars, row.tool_calls);
      return row;
    },
  );
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

/** Content of the rows `ids`, each cut to its first `cap` characters (null: whole). */
export function loadContents(store: Store, ids: readonly number[], cap: number | null): Map<number, string> {
  const rows = store.stmt(
    "SELECT id, substr(content, 1, ?) AS content FROM messages WHERE id IN (SELECT value FROM json_each(?))",
  ).all(cap ?? 2_147_483_647, JSON.stringify(ids)) as Row[];
  return new Map(rows.map((r) => [Number(r.id), String(r.content)]));
}
