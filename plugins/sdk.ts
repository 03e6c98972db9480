/**
 * Types for plugin authors (docs/plugins.md). A plugin exports `register(ctx: PluginContext)`.
 *
 * The host refuses any module outside the plugin's own directory, so a plugin cannot import this file
 * by a path that leaves its directory: copy it next to the plugin (it is self-contained and has no
 * imports), or use the JSDoc/inline types shown in examples/plugins/.
 */

export type HookName =
  | "on_session_start"
  | "on_session_end"
  | "pre_llm_call"
  | "post_llm_call"
  | "pre_tool_call"
  | "post_tool_call"
  | "post_compaction"
  | "on_session_delete"
  | "on_loop_tick";

/** Payload of each hook; every payload has `session_id`. Field names are snake_case. */
export interface HookPayloads {
  on_session_start: { session_id: string };
  on_session_end: { session_id: string; status: string; reason: string };
  pre_llm_call: { session_id: string; user_message: string; turn: number };
  post_llm_call: {
    session_id: string;
    assistant_message: { content: string; tool_calls?: unknown[] };
    turn: number;
  };
  pre_tool_call: {
    session_id: string;
    tool_name: string;
    args: Record<string, unknown>;
    tool_call_id: string;
  };
  post_tool_call: {
    session_id: string;
    tool_name: string;
    args: Record<string, unknown>;
    result: string;
    duration_ms: number;
    status: string;
  };
  /**
   * `old_session_id`: "" (compaction happens in place); `kind`: summarize | micro_summarize |
   * prune_tool_results; `reason`: manual | pre_api | post_tool | overflow | between_turns | proactive_prune;
   * `messages_removed`: active messages before − after, or null when unknown.
   */
  post_compaction: {
    session_id: string;
    old_session_id: string;
    kind: string;
    reason: string;
    before_tokens: number;
    after_tokens: number;
    messages_removed: number | null;
  };
  on_session_delete: { session_id: string; reason: "delete" | "archive" | "prune"; deleted_ids: string[] };
  on_loop_tick: { session_id: string; kind: "loop" | "heartbeat"; tick: number };
}

/** What `pre_tool_call` may return; `undefined` (or `{action: "allow"}`) lets the call through. */
export type PreToolCallResult =
  | void
  | undefined
  | { action: "allow" }
  | { action: "block"; message: string }
  | { action: "modify"; args: Record<string, unknown> };

/** What each hook handler may return (may also return a Promise of it). */
export interface HookResults {
  on_session_start: void;
  on_session_end: void;
  /** Text appended to this turn's user message; empty or non-string values add nothing. */
  pre_llm_call: string | void | undefined | null;
  post_llm_call: void;
  pre_tool_call: PreToolCallResult;
  post_tool_call: void;
  post_compaction: void;
  on_session_delete: void;
  on_loop_tick: void;
}

export type HookHandler<H extends HookName> = (
  payload: HookPayloads[H],
) => HookResults[H] | Promise<HookResults[H]>;

/** Which front-end an input came from (`hermes run -p`, an RPC or ACP client, a job's prompt and steps). */
export type InputSource = "cli" | "rpc" | "acp" | "job";

export interface CommandCallContext {
  session_id: string;
  source: InputSource;
}

export interface CommandDefinition {
  description: string;
  /** Returns the command's output text. */
  handler(args: string, context: CommandCallContext): string | void | Promise<string | void>;
}

export interface ToolCallContext {
  session_id: string;
}

export interface ToolDefinition {
  description: string;
  /** JSON Schema of the arguments object; the host validates arguments against it before the call. */
  parameters: Record<string, unknown>;
  /** Returns the tool result given to the model (non-strings are sent as JSON); throwing reports an error. */
  handler(args: Record<string, unknown>, context: ToolCallContext): unknown;
}

/** Durable key/value storage in the Hermes store, scoped to this plugin. Values are JSON. */
export interface PluginState {
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
  /** Resolves true when the key existed. */
  delete(key: string): Promise<boolean>;
  /** Keys (sorted) that start with `prefix` (all keys without one). */
  list(prefix?: string): Promise<string[]>;
}

export interface PluginLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface PluginContext {
  /** The plugin's name (plugin.json `name`, or the file name of a single-module plugin). */
  readonly name: string;
  /** The job entry's `config`, validated against plugin.json `config_schema` when one is given. */
  readonly config: Record<string, unknown>;
  readonly log: PluginLog;
  readonly state: PluginState;
  registerHook<H extends HookName>(name: H, handler: HookHandler<H>): void;
  registerCommand(name: string, definition: CommandDefinition): void;
  registerTool(name: string, definition: ToolDefinition): void;
}
