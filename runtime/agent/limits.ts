/**
 * Run limits (docs/job-file.md `limits`): counted per prompt (a `hermes run`, a `--resume -p`, an RPC
 * `session.prompt`, an ACP `session/prompt`), checked before each model call and after the last.
 */
import { parseDuration } from "../core/duration.ts";
import { RunError } from "../core/errors.ts";
import { formatUsd as usd } from "../core/usd.ts";

export type LimitReason = "max_turns" | "timeout" | "max_tokens" | "max_cost";

export class LimitError extends RunError {
  readonly limit: LimitReason;
  constructor(limit: LimitReason, message: string) {
    super(message, { reason: limit, exitCode: 3 });
    this.name = "LimitError";
    this.limit = limit;
  }
}

export class Budget {
  readonly maxTurns: number | undefined;
  readonly maxTokens: number | undefined;
  /** `limits.max_cost_usd` (`--max-budget-usd`). */
  readonly maxCostUsd: number | undefined;
  /** Model calls, tokens and USD of the current prompt. */
  turns = 0;
  tokens = 0;
  costUsd = 0;
  /** Model calls over the session's life in this process (a result's `turns` is a difference of these). */
  calls = 0;
  /** USD that the tasks delegated during the current prompt spent (theirs and their own tasks'). */
  delegatedUsd = 0;
  #depth = 0;
  #stale = false;
  /** The delegating session's budget, for a delegated task: its cost cap holds for the whole tree. */
  readonly #parent: Budget | undefined;
  constructor(
    limits: {
      max_turns?: number | undefined;
      max_tokens?: number | undefined;
      max_cost_usd?: number | undefined;
    } = {},
    parent?: Budget,
  ) {
    this.maxTurns = limits.max_turns;
    this.maxTokens = limits.max_tokens;
    this.maxCostUsd = limits.max_cost_usd;
    this.#parent = parent;
  }
  /**
   * A prompt starts: its counters start from zero at its first model call. Nested or concurrent work (a
   * `/status` while a prompt runs) shares the running prompt's counters. Returns the matching `end`.
   */
  begin(): () => void {
    if (this.#depth++ === 0) this.#stale = true;
    let ended = false;
    return () => {
      if (!ended) this.#depth--;
      ended = true;
    };
  }
  /** Throws when the next model call would exceed a limit. */
  beforeModelCall(): void {
    this.#fresh();
    if (this.maxTurns !== undefined && this.turns >= this.maxTurns) {
      throw new LimitError(
        "max_turns",
        `Stopped after ${this.turns} turns: limits.max_turns is ${this.maxTurns}`,
      );
    }
    if (this.maxTokens !== undefined && this.tokens >= this.maxTokens) throw this.#tokenLimit();
  }
  record(
    usage: { prompt_tokens: number; completion_tokens: number } | null,
    costUsd: number | null = null,
  ): void {
    this.#fresh();
    this.turns++;
    this.calls++;
    if (usage) this.tokens += usage.prompt_tokens + usage.completion_tokens;
    if (costUsd !== null) {
      this.costUsd += costUsd;
      for (let up = this.#parent; up; up = up.#parent) up.delegatedUsd += costUsd;
    }
  }
  /** What the current prompt and its delegated tasks spent together. */
  get treeUsd(): number {
    this.#fresh();
    return this.costUsd + this.delegatedUsd;
  }
  /**
   * The cost limit a model call would go past when it costs `estimateUsd` more (before it is sent: its
   * estimated input; while it streams: that plus the output so far), if any.
   */
  costLimit(estimateUsd: number, when: "before" | "during"): LimitError | undefined {
    this.#fresh();
    const above = this.#parent ? this.#parent.#treeLimit(estimateUsd, when) : undefined;
    if (above) return above;
    if (this.maxCostUsd === undefined || this.treeUsd + estimateUsd <= this.maxCostUsd) return undefined;
    const spent = this.delegatedUsd > 0
      ? `this prompt and its tasks had spent ${usd(this.treeUsd)} of limits.max_cost_usd ${
        usd(this.maxCostUsd)
      }`
      : `this prompt had spent ${usd(this.costUsd)} of limits.max_cost_usd ${usd(this.maxCostUsd)}`;
    return new LimitError(
      "max_cost",
      when === "before"
        ? `Stopped before a model call whose input is estimated at ${usd(estimateUsd)}: ${spent}`
        : `Stopped a streaming reply at an estimated ${usd(estimateUsd)}: ${spent}`,
    );
  }
  /**
   * The cost cap of a delegating session above (its prompt and all its tasks together) that a task's model
   * call costing `estimateUsd` more would pass, if any.
   */
  #treeLimit(estimateUsd: number, when: "before" | "during"): LimitError | undefined {
    const above = this.#parent ? this.#parent.#treeLimit(estimateUsd, when) : undefined;
    if (above || this.maxCostUsd === undefined) return above;
    const spent = this.treeUsd;
    if (spent + estimateUsd <= this.maxCostUsd) return undefined;
    const tree = `the delegating run and its tasks had spent ${usd(spent)} of its limits.max_cost_usd ` +
      usd(this.maxCostUsd);
    return new LimitError(
      "max_cost",
      when === "before"
        ? `Stopped before a model call whose input is estimated at ${usd(estimateUsd)}: ${tree}`
        : `Stopped a streaming reply at an estimated ${usd(estimateUsd)}: ${tree}`,
    );
  }
  /** The limit an answer already received went past (`max_tokens` or `max_cost` by its own size), if any. */
  exceeded(): LimitError | undefined {
    if (this.#stale) return undefined;
    if (this.maxTokens !== undefined && this.tokens > this.maxTokens) return this.#tokenLimit();
    if (this.maxCostUsd !== undefined && this.treeUsd > this.maxCostUsd) {
      return new LimitError(
        "max_cost",
        `Stopped after ${usd(this.treeUsd)}${this.delegatedUsd > 0 ? " (with its tasks)" : ""}: ` +
          `limits.max_cost_usd is ${usd(this.maxCostUsd)}`,
      );
    }
    for (let up = this.#parent; up; up = up.#parent) {
      if (up.maxCostUsd !== undefined && up.treeUsd > up.maxCostUsd) {
        return new LimitError(
          "max_cost",
          `Stopped after the delegating run and its tasks spent ${
            usd(up.treeUsd)
          }: its limits.max_cost_usd ` +
            `is ${usd(up.maxCostUsd)}`,
        );
      }
    }
    return undefined;
  }
  #tokenLimit(): LimitError {
    return new LimitError(
      "max_tokens",
      `Stopped after ${this.tokens} tokens: limits.max_tokens is ${this.maxTokens}`,
    );
  }
  // Reset lazily, so `/status` between prompts still shows the last prompt's counts.
  #fresh(): void {
    if (!this.#stale) return;
    this.#stale = false;
    this.turns = 0;
    this.tokens = 0;
    this.costUsd = 0;
    this.delegatedUsd = 0;
  }
}

/** Starts `limits.timeout` (when set): the returned signal aborts with a LimitError; `clear` stops the timer. */
export function startTimeout(limit: string | undefined): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = limit === undefined ? undefined : setTimeout(() => {
    controller.abort(new LimitError("timeout", `Stopped after ${limit}: limits.timeout reached`));
  }, parseDuration(limit));
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** The limit that ended a run or turn: thrown directly, or the reason the timeout signal aborted with. */
export function limitOf(caught: unknown, timeout: AbortSignal): LimitError | undefined {
  if (caught instanceof LimitError) return caught;
  return timeout.reason instanceof LimitError ? timeout.reason : undefined;
}
