/**
 * The lifecycle-hook seam (docs/plugins.md). The runtime calls these at fixed moments; the plugin host
 * (plugins/host.ts) implements them by fanning out to plugin subprocesses. `noHooks` does nothing.
 * Payload fields are snake_case and every payload has `session_id`.
 */

export interface SessionStartPayload {
  session_id: string;
}
export interface SessionEndPayload {
  session_id: string;
  status: string;
  reason: string;
}
export interface PreLlmCallPayload {
  session_id: string;
  user_message: string;
  turn: number;
}
export interface PostLlmCallPayload {
  session_id: string;
  assistant_message: { content: string; tool_calls?: unknown[] };
  turn: number;
}
export interface PreToolCallPayload {
  session_id: string;
  tool_name: string;
  args: Record<string, unknown>;
  tool_call_id: string;
}
export type PreToolDecision =
  | { action: "allow" }
  | { action: "block"; message: string }
  | { action: "modify"; args: Record<string, unknown> };
export interface PostToolCallPayload {
  session_id: string;
  tool_name: string;
  args: Record<string, unknown>;
  result: string;
  duration_ms: number;
  status: string;
}
/**
 * After a committed compaction. `old_session_id` is "" when the compaction happened in place
 * (always, in Hermes); `kind` is summarize | micro_summarize | prune_tool_results; `reason` is manual | pre_api |
 * post_tool | overflow | between_turns | proactive_prune; `messages_removed` is active messages before − after
 * (null when unknown).
 */
export interface PostCompactionPayload {
  session_id: string;
  old_session_id: string;
  kind: string;
  reason: string;
  before_tokens: number;
  after_tokens: number;
  messages_removed: number | null;
}
export interface SessionDeletePayload {
  /** The first affected id (every payload has one); all ids are in `deleted_ids`. */
  session_id: string;
  reason: "delete" | "archive" | "prune";
  deleted_ids: string[];
}
export interface LoopTickPayload {
  session_id: string;
  kind: "loop" | "heartbeat";
  tick: number;
}

export interface Hooks {
  onSessionStart(payload: SessionStartPayload): Promise<void>;
  onSessionEnd(payload: SessionEndPayload): Promise<void>;
  /** Returns the texts to append to this turn's user message (joined by the caller). */
  preLlmCall(payload: PreLlmCallPayload): Promise<string[]>;
  postLlmCall(payload: PostLlmCallPayload): Promise<void>;
  /** Fails closed: an implementation that cannot decide returns a block. */
  preToolCall(payload: PreToolCallPayload): Promise<PreToolDecision>;
  postToolCall(payload: PostToolCallPayload): Promise<void>;
  postCompaction(payload: PostCompactionPayload): Promise<void>;
  onSessionDelete(payload: SessionDeletePayload): Promise<void>;
  onLoopTick(payload: LoopTickPayload): Promise<void>;
}

const done = Promise.resolve();
export const noHooks: Hooks = {
  onSessionStart: () => done,
  onSessionEnd: () => done,
  preLlmCall: () => Promise.resolve([]),
  postLlmCall: () => done,
  preToolCall: () => Promise.resolve({ action: "allow" }),
  postToolCall: () => done,
  postCompaction: () => done,
  onSessionDelete: () => done,
  onLoopTick: () => done,
};
