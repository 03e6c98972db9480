/**
 * How a turn or a run ended, and the result object that reports it (docs/result.md). `hermes run`, `--resume`, RPC, ACP and
 * the daemon classify with these functions, so `status`, `terminal_reason` and `exit_code` agree everywhere.
 * Pure: callers pass what they observed (the error caught, the signals, the session's counters, the clock).
 */
import { errorMessage, ExitCode, RunError, ValidationError } from "../core/errors.ts";
import { limitOf, type LimitReason } from "../agent/limits.ts";
import type { SchemaCheck } from "./output_schema.ts";
import { type RunResultFields, SCHEMA_VERSION } from "../core/events.ts";
import type { SessionRow } from "../core/types.ts";
import { roundUsd } from "../core/usd.ts";

export type RunStatus = RunResultFields["status"];

export type Ending =
  | { status: "success"; terminal_reason: string; exit_code: typeof ExitCode.success; error: null }
  | { status: "failed"; terminal_reason: string; exit_code: number; error: string }
  | { status: "limit"; terminal_reason: LimitReason; exit_code: typeof ExitCode.limit; error: string }
  | { status: "interrupted"; terminal_reason: "cancelled" | "interrupted"; exit_code: number; error: string };

/**
 * The result object (`hermes run --output json`, RPC `session.prompt` and `job.run`, ACP `_meta`): the
 * `result` event's fields (runtime/core/events.ts, one definition) plus its type and session.
 */
export interface RunResult extends RunResultFields {
  type: "result";
  schema_version: typeof SCHEMA_VERSION;
  session_id: string;
}

/** What was observed when the work threw. */
export interface Stop {
  caught: unknown;
  /** The `limits.timeout` signal: when it fired, its reason names the limit. */
  timeout: AbortSignal;
  /** A cancel request for this turn (`session.cancel`, ACP `session/cancel`). */
  cancel?: AbortSignal;
  /** The process or server going away (SIGINT/SIGTERM, the daemon stopping, the session closing). */
  interrupt?: AbortSignal;
  /** The exit code of an interruption, read once it happened (130 for SIGINT, 143 for SIGTERM; default 130). */
  interruptExitCode?: () => number | undefined;
  /** What an interruption stopped, named in `error` (default `run`). */
  interrupted?: "run" | "server";
}

/** Why work that threw ended, in this order: a limit, a cancel, an interruption, invalid input, a failure. */
export function endingOfError(stop: Stop): Ending {
  const limit = limitOf(stop.caught, stop.timeout);
  if (limit) {
    return { status: "limit", terminal_reason: limit.limit, exit_code: ExitCode.limit, error: limit.message };
  }
  if (stop.cancel?.aborted) {
    return {
      status: "interrupted",
      terminal_reason: "cancelled",
      exit_code: ExitCode.interrupted,
      error: "The turn was cancelled",
    };
  }
  if (stop.interrupt?.aborted) {
    return {
      status: "interrupted",
      terminal_reason: "interrupted",
      exit_code: stop.interruptExitCode?.() ?? ExitCode.interrupted,
      error: `The ${stop.interrupted ?? "run"} was interrupted`,
    };
  }
  const { caught } = stop;
  if (caught instanceof ValidationError) {
    return {
      status: "failed",
      terminal_reason: "invalid_input",
      exit_code: caught.exitCode,
      error: caught.message,
    };
  }
  return {
    status: "failed",
    terminal_reason: caught instanceof RunError ? caught.reason : "error",
    exit_code: ExitCode.failed,
    error: errorMessage(caught),
  };
}

/** What was observed when the work returned an answer. */
export interface Answer {
  final: string;
  /** The check against `output.schema` (after the repair turn), when the job has one. */
  schema?: SchemaCheck;
  /** Why it ended well (default `completed`; `loop_done` or `loop_paused` after a loop ended by itself). */
  reason?: string;
  /** The finish reason of the model call that gave the answer (none when a slash command did). */
  finish_reason?: string;
}

/** Finish reasons that mean the answer is not whole: the provider cut it. */
const CUT = new Map([
  ["length", {
    terminal_reason: "output_truncated",
    error: "The model's final answer was cut off by the output token limit (finish_reason: length)",
  }],
  ["content_filter", {
    terminal_reason: "content_filtered",
    error:
      "The model's final answer was withheld by the provider's content filter (finish_reason: content_filter)",
  }],
]);

/**
 * An answer the provider cut (output limit, content filter), that misses `output.schema` or is empty fails
 * the work; any other answer succeeds.
 */
export function endingOfAnswer(answer: Answer): Ending {
  const cut = answer.finish_reason === undefined ? undefined : CUT.get(answer.finish_reason);
  if (cut) return { status: "failed", exit_code: ExitCode.failed, ...cut };
  if (answer.schema && !answer.schema.ok) {
    return {
      status: "failed",
      terminal_reason: "schema_mismatch",
      exit_code: ExitCode.failed,
      error: `The final answer does not match output.schema: ${answer.schema.error}`,
    };
  }
  if (answer.final.trim() === "") {
    return {
      status: "failed",
      terminal_reason: "empty_response",
      exit_code: ExitCode.failed,
      error: "The model's final answer was empty",
    };
  }
  return {
    status: "success",
    terminal_reason: answer.reason ?? "completed",
    exit_code: ExitCode.success,
    error: null,
  };
}

/** What the result reports besides its ending. */
export interface ResultFacts {
  session_id: string;
  job: string;
  /** The session's labels. */
  labels: Record<string, string>;
  final: string;
  /** The parsed structured answer (null without `output.schema` or when it did not match). */
  output: unknown;
  /** Model calls made by this work. */
  turns: number;
  /** The session's stored token and cost counters before and after the work. */
  before: UsageCounters;
  after: UsageCounters;
  /** Clock readings (ms) when the work started and ended. */
  started: number;
  ended: number;
  /** `compaction` events of the session during the work. */
  compactions: number;
  /** `off` when something ran without the OS sandbox (`sandbox: off`): the result says so. */
  sandbox?: "on" | "off" | null;
}

/** The session's running totals a result's usage and cost are the difference of. */
export type UsageCounters = Pick<
  SessionRow,
  | "prompt_tokens"
  | "completion_tokens"
  | "cached_tokens"
  | "cache_write_tokens"
  | "reasoning_tokens"
  | "cost_usd"
  | "unpriced_calls"
>;

/** Counters of a session that has done nothing yet. */
export const NO_USAGE: UsageCounters = {
  prompt_tokens: 0,
  completion_tokens: 0,
  cached_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0,
  unpriced_calls: 0,
};

export function buildResult(ending: Ending, facts: ResultFacts): RunResult {
  // Key order is the order `--output json` prints.
  return {
    type: "result",
    schema_version: SCHEMA_VERSION,
    status: ending.status,
    exit_code: ending.exit_code,
    session_id: facts.session_id,
    job: facts.job,
    labels: facts.labels,
    final: facts.final,
    output: facts.output,
    turns: facts.turns,
    usage: {
      prompt_tokens: facts.after.prompt_tokens - facts.before.prompt_tokens,
      completion_tokens: facts.after.completion_tokens - facts.before.completion_tokens,
      cached_tokens: facts.after.cached_tokens - facts.before.cached_tokens,
      cache_write_tokens: facts.after.cache_write_tokens - facts.before.cache_write_tokens,
      reasoning_tokens: facts.after.reasoning_tokens - facts.before.reasoning_tokens,
    },
    cost_usd: facts.after.unpriced_calls > facts.before.unpriced_calls
      ? null
      : roundUsd(facts.after.cost_usd - facts.before.cost_usd),
    duration_ms: facts.ended - facts.started,
    compactions: facts.compactions,
    terminal_reason: ending.terminal_reason,
    error: ending.error,
    ...(facts.sandbox === "off" ? { sandbox: "off" as const } : {}),
  };
}

/**
 * The result of work that finished but whose report could not be delivered (a CI output file that cannot
 * be written): a failure, exit 1, so that what is printed and the process's exit code agree. A result that
 * already failed keeps its own ending.
 */
export function failedDelivery(
  result: RunResult,
  failure: { terminal_reason: string; error: string },
): RunResult {
  if (result.status !== "success") return result;
  return { ...result, status: "failed", exit_code: ExitCode.failed, ...failure };
}
