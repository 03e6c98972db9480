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
  /** A session was opened (a run, a resumed session, an RPC or ACP session), before its first turn. */
  on_session_start: { session_id: string };
  /** A session's work ended. */
  on_session_end: {
    session_id: string;
    /** The session's status: success, failed, limit, interrupted, … */
    status: string;
    /** Why it ended: the terminal reason (docs/exit-codes.md). */
    reason: string;
  };
  /** Before each model call of a turn; may return text to append to this turn's user message. */
  pre_llm_call: {
    session_id: string;
    /** The user message of the current turn. */
    user_message: string;
    /** The turn's number in the session. */
    turn: number;
  };
  /** After each model reply. */
  post_llm_call: {
    session_id: string;
    /** The reply: its text and the tool calls it asks for. */
    assistant_message: { content: string; tool_calls?: unknown[] };
    turn: number;
  };
  /** Before a tool call runs (built-in, plugin or MCP), once the rules or an approver allowed it; may block or modify it. */
  pre_tool_call: {
    session_id: string;
    /** The tool as the model named it (`mcp__SERVER__TOOL` for an MCP tool). */
    tool_name: string;
    /** The call's arguments. */
    args: Record<string, unknown>;
    tool_call_id: string;
  };
  /** After every tool call: run, failed, or denied (by the rules, the approver or a pre_tool_call hook). */
  post_tool_call: {
    session_id: string;
    tool_name: string;
    args: Record<string, unknown>;
    /** The tool result the model gets, secrets replaced. */
    result: string;
    duration_ms: number;
    /** ok, error or denied. */
    status: string;
  };
  /** After a compaction pass that changed the transcript, exactly once per pass, on every path. */
  post_compaction: {
    session_id: string;
    /** Always "": compaction happens in place. */
    old_session_id: string;
    /** summarize, micro_summarize or prune_tool_results. */
    kind: string;
    /** manual, pre_api, post_tool, overflow, between_turns or proactive_prune. */
    reason: string;
    before_tokens: number;
    after_tokens: number;
    /** Active messages before − after, or null when unknown. */
    messages_removed: number | null;
  };
  /** Stored sessions were deleted, archived or pruned (global plugins; once per operation). */
  on_session_delete: {
    session_id: string;
    reason: "delete" | "archive" | "prune";
    /** Every session the operation affected. */
    deleted_ids: string[];
  };
  /** A /loop or /heartbeat tick is about to run. */
  on_loop_tick: {
    session_id: string;
    kind: "loop" | "heartbeat";
    /** The tick's number, from 1. */
    tick: number;
  };
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

/** Which front-end an input came from (`hermes run -p`, an RPC, ACP or HTTP client, a job's prompt and steps). */
export type InputSource = "cli" | "rpc" | "acp" | "http" | "job";

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
