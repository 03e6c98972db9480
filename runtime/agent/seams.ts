/**
 * Interfaces between the agent loop (runtime/agent.ts) and the subsystems that extend it:
 * compaction (runtime/compaction/), recurring work (loops/) and the plugin host (plugins/).
 */
import type { CommandSource, SlashCommand } from "./slash.ts";
import type { Tool } from "../tools/tool.ts";
import type { Hooks } from "../core/hooks.ts";
import type { AppendMessage, CompactionKind, PassOutcome } from "../store/store.ts";
import type { StoredMessage } from "../core/types.ts";

export interface PromptOptions {
  source: CommandSource;
  signal?: AbortSignal;
  /**
   * The step record (store.startStep) this prompt sends: its user turn is stored with the record, once. A
   * step a killed run had sent already is finished from the transcript instead, never sent again.
   */
  step?: number;
}

export interface PromptResult {
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
  /** Runs one turn (all its steps) and resolves with the final answer. Serialised per agent. */
  prompt(text: string, options: PromptOptions): Promise<PromptResult>;
  /** Runs a slash command or a prompt. */
  input(text: string, options: PromptOptions): Promise<PromptResult>;
}

/**
 * Why a compaction pass ran (docs/compaction.md, the Python Hermes Agent's names): `manual` (`/compress`,
 * `hermes sessions compact`), `pre_api` (before a model call), `post_tool` (before the model call that follows
 * tool results), `overflow` (the provider rejected a request as too long), `between_turns` (micro-compaction),
 * `proactive_prune` (tool results pruned below the threshold).
 */
export type CompactionReason =
  | "manual"
  | "pre_api"
  | "post_tool"
  | "overflow"
  | "between_turns"
  | "proactive_prune";

export type { CompactionKind, PassOutcome } from "../store/store.ts";

export interface CompactionOutcome {
  /** True when the transcript changed (a compaction event, a log row and one post_compaction call happened). */
  changed: boolean;
  /** How the pass ended; every pass is logged with it. */
  outcome: PassOutcome;
  kind?: CompactionKind;
  before_tokens: number;
  after_tokens: number;
  /** Active messages before − after. */
  messages_removed: number;
  /** after_tokens ÷ the compaction threshold. */
  occupancy: number;
  /** Why nothing changed (no-op, refused, lease held elsewhere, cooldown, breaker, failure). */
  note?: string;
}

/** How full a session is: its estimated next prompt against the compaction threshold. */
export interface Occupancy {
  tokens: number;
  threshold_tokens: number;
  window_tokens: number;
  /** tokens ÷ threshold_tokens. */
  occupancy: number;
}

export interface Compactor {
  /**
   * Before every model call: compacts when the estimate is over threshold × context_window. `afterTools`:
   * the call follows tool results of this turn (reason `post_tool`, else `pre_api`). `overheadTokens`:
   * chars/4 of what every request carries besides the transcript (the tool definitions). Rejects with a
   * `RunError` (reason `context_too_large`) when even the irreducible part of the request exceeds the window.
   * `view`: the stored transcript is over the window and another process holds the compaction lease, so the
   * next request is to be built from these rows (the ladder applied in memory, nothing stored) instead.
   */
  beforeModelCall(
    sessionId: string,
    options: { signal?: AbortSignal; afterTools?: boolean; overheadTokens?: number },
  ): Promise<(CompactionOutcome & { view?: StoredMessage[] }) | null>;
  /**
   * The provider rejected a request as too long: one bounded attempt. `shrank`: the retry is smaller — the
   * stored transcript was compacted, or (another process holds the lease) `view` holds the rows to retry
   * with, the ladder applied in memory.
   */
  recoverOverflow(
    sessionId: string,
    options: { signal?: AbortSignal; overheadTokens?: number },
  ): Promise<{ shrank: boolean; view?: StoredMessage[] }>;
  /** `/compress [focus]` and `hermes sessions compact`: forced, bypasses cooldown and breaker. */
  compact(sessionId: string, options: { focus?: string; signal?: AbortSignal }): Promise<CompactionOutcome>;
  /**
   * After a completed user turn: micro-compaction and proactive pruning, when configured; null when nothing
   * was due. Never throws for a compaction failure (it is logged); rejects only when `signal` aborts.
   */
  afterTurn(sessionId: string, options: { signal?: AbortSignal }): Promise<CompactionOutcome | null>;
  /** The rows to append for a tool result: itself, or (too large) its full text archived and a cut copy. */
  fitToolResult(sessionId: string, message: AppendMessage): Promise<AppendMessage[]>;
  /** The session's current occupancy (cheap: the estimate before a model call). */
  occupancy(sessionId: string): Promise<Occupancy>;
  /**
   * The server runs a smaller context than `model.context_window` (it said so, or it truncated a prompt):
   * from now on every threshold is taken against `tokens`. Returns the window it replaced, or null when
   * `tokens` is not smaller than the current window (nothing changes).
   */
  useWindow(tokens: number): number | null;
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
