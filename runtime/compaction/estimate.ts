/**
 * The prompt-size estimate that triggers compaction: the provider's last real `prompt_tokens` plus a
 * chars/4 estimate of everything appended after that reading (chars/4 alone when there is no usable reading).
 */
import type { StoredMessage } from "../core/types.ts";
import type { EstimateInput, TranscriptRow } from "../store/store.ts";
import { type PlanRow, tokensOf, toPlanRow } from "./rows.ts";

export type EstimateRow = Pick<
  PlanRow,
  "seq" | "role" | "kind" | "tokens" | "prompt_tokens" | "completion_tokens"
>;

/** chars/4 of one message as it is sent to the model (content and tool calls). */
export function approxTokens(message: Pick<StoredMessage, "content" | "tool_calls">): number {
  return tokensOf(message.content.length, message.tool_calls);
}

/**
 * Estimated prompt tokens of the next request built from `active` (the session's active rows, prompt order).
 *
 * The reading is the newest assistant message that carries `prompt_tokens`. It is ignored when a compaction
 * committed after it (a summary or placeholder row with a higher seq): it measured a transcript that no longer
 * exists. The assistant message itself counts with its real `completion_tokens` when known.
 */
export function estimateTokens(active: readonly EstimateRow[]): number {
  let reading: EstimateRow | undefined;
  let lastCompactionSeq = 0;
  let total = 0;
  for (const m of active) {
    total += m.tokens;
    if (m.kind !== "message" && m.seq > lastCompactionSeq) lastCompactionSeq = m.seq;
    if (m.role === "assistant" && m.prompt_tokens !== null && (!reading || m.seq > reading.seq)) reading = m;
  }
  if (!reading || reading.seq < lastCompactionSeq) return total;
  total = reading.prompt_tokens! + (reading.completion_tokens ?? reading.tokens);
  for (const m of active) if (m.seq > reading.seq) total += m.tokens;
  return total;
}

/**
 * `estimateTokens` of the whole transcript from what `store.estimateInput` reads: the reading and the rows
 * after it, so the check before every model call does not visit every active row.
 */
export function estimateFromInput(input: EstimateInput): number {
  const { reading } = input;
  let total = reading ? reading.prompt_tokens! + (reading.completion_tokens ?? rowTokens(reading)) : 0;
  for (const row of input.after) total += rowTokens(row);
  return total;
}

function rowTokens(row: TranscriptRow): number {
  return tokensOf(row.chars, row.tool_calls);
}

/** `estimateTokens` of stored messages (e.g. `store.activeMessages(id)`). */
export function estimateMessages(active: readonly StoredMessage[]): number {
  return estimateTokens(active.map(toPlanRow));
}
