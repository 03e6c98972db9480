/**
 * The one token estimator of compaction (docs/compaction.md): chars/4 of each row, scaled by a calibration ratio
 * (the provider's real `prompt_tokens` ÷ the chars/4 of the rows that request carried). Every verdict of a
 * pass — before, after, the anti-growth refusal, the ineffective verdict, the tail budget — uses `measure`
 * with one ratio, so a pass can never report chars/4 on one side and the provider's count on the other.
 * The check before every model call starts from the newest real reading instead (cheap: no need to visit
 * every row), and scales only what was appended after it.
 */
import type { StoredMessage } from "../core/types.ts";
import type { EstimateInput, TranscriptRow } from "../store/store.ts";
import { type PlanRow, tokensOf, toPlanRow } from "./rows.ts";

export type EstimateRow = Pick<
  PlanRow,
  "seq" | "role" | "kind" | "tokens" | "prompt_tokens" | "completion_tokens"
>;

/** Where the calibration ratio is kept between passes (session state). */
export const CALIBRATION_KEY = "compaction.calibration";

/**
 * A reading can be far off chars/4 (a tokenizer that packs repetitive text, or one that splits CJK), but a
 * ratio outside this range says more about a broken usage report than about the text.
 */
export const RATIO_RANGE: readonly [number, number] = [0.25, 4];

/** chars/4 of one message as it is sent to the model (content and tool calls). */
export function approxTokens(message: Pick<StoredMessage, "content" | "tool_calls">): number {
  return tokensOf(message.content.length, message.tool_calls);
}

/** Tokens of `rows` on the calibrated basis: ⌈ratio × Σ chars/4⌉. */
export function measure(rows: readonly Pick<PlanRow, "tokens">[], ratio: number): number {
  let total = 0;
  for (const r of rows) total += r.tokens;
  return Math.ceil(total * ratio);
}

/**
 * The ratio the newest usable reading implies: its `prompt_tokens` ÷ chars/4 of the active rows before it
 * (the request it measured). Null when there is no reading, or a compaction committed after it (it measured
 * a transcript that no longer exists), or it measured nothing.
 */
export function calibrationFrom(active: readonly EstimateRow[]): number | null {
  const reading = usableReading(active);
  if (!reading) return null;
  let before = 0;
  for (const m of active) if (m.seq < reading.seq) before += m.tokens;
  if (before === 0) return null;
  return clampRatio(reading.prompt_tokens! / before);
}

export function clampRatio(ratio: number): number {
  if (!Number.isFinite(ratio)) return 1;
  return Math.min(RATIO_RANGE[1], Math.max(RATIO_RANGE[0], Math.round(ratio * 1000) / 1000));
}

/**
 * Estimated prompt tokens of the next request built from `active` (the session's active rows, prompt order).
 *
 * The reading is the newest assistant message that carries `prompt_tokens`. It is ignored when a compaction
 * committed after it (a summary or placeholder row with a higher seq): it measured a transcript that no longer
 * exists. The assistant message itself counts with its real `completion_tokens` when known; rows after it,
 * and everything when there is no usable reading, count at `ratio` × chars/4.
 */
export function estimateTokens(active: readonly EstimateRow[], ratio = 1): number {
  const reading = usableReading(active);
  if (!reading) return measure(active, ratio);
  let after = 0;
  for (const m of active) if (m.seq > reading.seq) after += m.tokens;
  return reading.prompt_tokens! + (reading.completion_tokens ?? reading.tokens) + Math.ceil(after * ratio);
}

/**
 * `estimateTokens` of the whole transcript from what `store.estimateInput` reads: the reading and the rows
 * after it, so the check before every model call does not visit every active row.
 */
export function estimateFromInput(input: EstimateInput, ratio = 1): number {
  const { reading } = input;
  let after = 0;
  for (const row of input.after) after += rowTokens(row);
  if (!reading) return Math.ceil(after * ratio);
  return reading.prompt_tokens! + (reading.completion_tokens ?? rowTokens(reading)) +
    Math.ceil(after * ratio);
}

function usableReading(active: readonly EstimateRow[]): EstimateRow | undefined {
  let reading: EstimateRow | undefined;
  let lastCompactionSeq = 0;
  for (const m of active) {
    if (m.kind !== "message" && m.seq > lastCompactionSeq) lastCompactionSeq = m.seq;
    if (m.role === "assistant" && m.prompt_tokens !== null && (!reading || m.seq > reading.seq)) reading = m;
  }
  return reading && reading.seq > lastCompactionSeq ? reading : undefined;
}

function rowTokens(row: TranscriptRow): number {
  return tokensOf(row.chars, row.tool_calls);
}

/** `estimateTokens` of stored messages (e.g. `store.activeMessages(id)`). */
export function estimateMessages(active: readonly StoredMessage[], ratio = 1): number {
  return estimateTokens(active.map(toPlanRow), ratio);
}
