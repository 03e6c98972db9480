/**
 * Interfaces between the agent loop (runtime/agent.ts) and the subsystems that extend it:
 * compaction (runtime/compaction/), recurring work (loops/) and the plugin host (plugins/).
 */
import type { CommandSource, SlashCommand } from "./slash.ts";
import type { Tool } from "../tools/tool.ts";
import type { Hooks } from "../core/hooks.ts";

export interface TurnOptions {
  source: CommandSource;
  signal?: AbortSignal;
}

export interface TurnResult {
  /** The final assistant text of this turn (or a command's output). */
  final: string;
  /** Model calls made during this turn. */
  model_calls: number;
}

/** What subsystems may do with a live session. Implemented by `Agent`. */
export interface AgentLike {
  readonly sessionId: string;
  /** True while a turn is running. */
  readonly busy: boolean;
  /** Runs one user turn (tool rounds included) and resolves with the final answer. Serialised per agent. */
  prompt(text: string, options: TurnOptions): Promise<TurnResult>;
  /** Runs a slash command or a prompt. */
  input(text: string, options: TurnOptions): Promise<TurnResult>;
}

export type CompactionReason = "threshold" | "manual" | "overflow";

export interface CompactionOutcome {
  /** True when the transcript changed (a compaction event, a log row and one post_compaction call happened). */
  changed: boolean;
  kind?: "summarize" | "prune_tool_results";
  before_tokens: number;
  after_tokens: number;
  messages_removed: number;
  /** Why nothing changed (no-op, refused, lease held elsewhere, cooldown, breaker, failure). */
  note?: string;
}

export interface Compactor {
  /** Before every model call: compacts when the estimate is over threshold × context_window. */
  beforeModelCall(sessionId: string, options: { signal?: AbortSignal }): Promise<CompactionOutcome | null>;
  /** The provider rejected a request as too long: one bounded attempt; true when the transcript shrank. */
  recoverOverflow(sessionId: string, options: { signal?: AbortSignal }): Promise<boolean>;
  /** `/compress [focus]` and `hermes sessions compact`: forced, bypasses cooldown and breaker. */
  compact(sessionId: string, options: { focus?: string; signal?: AbortSignal }): Promise<CompactionOutcome>;
}

/** Recurring work in a session: `/loop` and `/heartbeat` (loops/). */
export interface Recurring {
  /** The slash commands this subsystem provides for `agent`. */
  commands(agent: AgentLike): SlashCommand[];
  /** True when the session has an active (not paused, not ended) loop or heartbeat. */
  isActive(sessionId: string): Promise<boolean>;
  /**
   * Runs due ticks and beats until nothing is active or the signal aborts; resolves with the reason
   * (`loop_done` when a loop ended by itself) and the last tick's final answer.
   */
  drive(agent: AgentLike, options: { signal?: AbortSignal }): Promise<{ reason: string; final: string }>;
}

/** A started set of plugins: hooks, plus tools and commands they registered. */
export interface PluginSet {
  readonly hooks: Hooks;
  tools(): Tool[];
  commands(): SlashCommand[];
  stop(): Promise<void>;
}
