/** Run limits (DESIGN §3 `limits`): counted across a whole run, checked before each model call. */
import { parseDuration } from "../core/duration.ts";
import { RunError } from "../core/errors.ts";

export type LimitReason = "max_turns" | "timeout" | "max_tokens";

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
  turns = 0;
  tokens = 0;
  constructor(limits: { max_turns?: number | undefined; max_tokens?: number | undefined } = {}) {
    this.maxTurns = limits.max_turns;
    this.maxTokens = limits.max_tokens;
  }
  /** Throws when the next model call would exceed a limit. */
  beforeModelCall(): void {
    if (this.maxTurns !== undefined && this.turns >= this.maxTurns) {
      throw new LimitError(
        "max_turns",
        `Stopped after ${this.turns} turns: limits.max_turns is ${this.maxTurns}`,
      );
    }
    if (this.maxTokens !== undefined && this.tokens >= this.maxTokens) {
      throw new LimitError(
        "max_tokens",
        `Stopped after ${this.tokens} tokens: limits.max_tokens is ${this.maxTokens}`,
      );
    }
  }
  record(usage: { prompt_tokens: number; completion_tokens: number } | null): void {
    this.turns++;
    if (usage) this.tokens += usage.prompt_tokens + usage.completion_tokens;
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
