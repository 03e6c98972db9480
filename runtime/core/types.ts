/** Core data shapes shared by the runtime, the store, providers and plugins. */

export type Role = "system" | "user" | "assistant" | "tool";

/**
 * Which front-end an input came from: `hermes run -p` (`cli`), a JSON-RPC, ACP or HTTP (`hermes serve`) client, or a job file's
 * prompt and steps (`job`, also the daemon). Slash commands, `message` events and plugin commands see it.
 */
export const INPUT_SOURCES = ["cli", "rpc", "acp", "http", "job"] as const;
export type InputSource = typeof INPUT_SOURCES[number];

/** A tool call as the model asked for it; `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Message {
  role: Role;
  content: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Tool name on `tool` messages. */
  name?: string;
  /**
   * Assistant messages: the reasoning the provider returned with them, signed, in order. Sent back verbatim
   * with the message in later requests (Anthropic requires a tool round's thinking blocks back unchanged).
   */
  reasoning?: ReasoningBlock[];
}

/**
 * Provider-signed reasoning: an Anthropic `thinking` block and its signature, or an encrypted one; or an
 * OpenAI Responses `reasoning` item, whose `encrypted_content` carries the reasoning between stateless
 * requests (`summary` is its readable digest, when the model gave one).
 */
export type ReasoningBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "openai_reasoning"; id: string; encrypted_content: string; summary: string[] };

/** `summary` marks a compaction summary; `pruned` a tool result replaced by a placeholder. */
export type MessageKind = "message" | "summary" | "pruned";

export interface StoredMessage extends Message {
  id: number;
  session_id: string;
  /** Append order within the session; never reused. */
  seq: number;
  /** Prompt order; compaction places summaries between kept rows. */
  pos: number;
  kind: MessageKind;
  active: boolean;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  created_at: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  /**
   * Prompt tokens the provider served from its prompt cache (Chat Completions
   * `usage.prompt_tokens_details.cached_tokens`), part of `prompt_tokens`. Providers leave it out when the
   * server reports none; events and results always carry it (0 then).
   */
  cached_tokens?: number;
  /**
   * Prompt tokens written to the provider's prompt cache by this request (Anthropic
   * `cache_creation_input_tokens`), part of `prompt_tokens` and billed at the cache-write price.
   */
  cache_write_tokens?: number;
  /**
   * Completion tokens the model spent reasoning before it answered (Chat Completions
   * `usage.completion_tokens_details.reasoning_tokens`), part of `completion_tokens`.
   */
  reasoning_tokens?: number;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export type SessionStatus = "running" | "success" | "failed" | "limit" | "interrupted" | "idle";

export interface SessionRow {
  id: string;
  job: string;
  job_path: string | null;
  status: SessionStatus;
  terminal_reason: string | null;
  parent_id: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  archived_at: number | null;
  /** The resolved job (JSON) so `--resume` can continue without the original file. */
  config_json: string;
  model: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  /** Cached prompt tokens the provider reported, summed like prompt_tokens. */
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  /** What the priced model calls cost (USD), summed; calls of a model without a known price add nothing … */
  cost_usd: number;
  /** … and are counted here instead: a run with any such call reports `cost_usd: null`. */
  unpriced_calls: number;
  turns: number;
  owner_host: string | null;
  owner_pid: number | null;
  owner_started: string | null;
  /** The session's labels (`labels:` of its job, `--label`, the CI's): key → value. */
  labels: Record<string, string>;
}
