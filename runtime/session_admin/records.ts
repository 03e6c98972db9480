/**
 * The stable JSON shapes of `hermes sessions` (list, show, export, search). Field names are part of the CLI
 * contract: add fields freely, never rename or remove one. Times are ISO 8601 strings (UTC, milliseconds).
 */
import type { MessageKind, Role, StoredMessage, ToolCall } from "../core/types.ts";

export type { SessionSummary } from "../store/store.ts";

/** One message as `show --json` and `export --format jsonl` print it; every key is always present. */
export interface MessageRecord {
  seq: number;
  pos: number;
  role: Role;
  kind: MessageKind;
  /** False for rows replaced by compaction (kept, recoverable, shown with `--all`). */
  active: boolean;
  content: string;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  name: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  created_at: string;
}

/** A stored row as printed; its secrets were replaced before it was stored (runtime/session/outlets.ts). */
export function toMessageRecord(message: StoredMessage): MessageRecord {
  return {
    seq: message.seq,
    pos: message.pos,
    role: message.role,
    kind: message.kind,
    active: message.active,
    content: message.content,
    tool_calls: message.tool_calls?.map((call) => ({
      id: call.id,
      name: call.name,
      arguments: call.arguments,
    })) ?? null,
    tool_call_id: message.tool_call_id ?? null,
    name: message.name ?? null,
    prompt_tokens: message.prompt_tokens,
    completion_tokens: message.completion_tokens,
    created_at: isoTime(message.created_at),
  };
}

export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
