/**
 * One turn of a live session served over RPC or ACP: runs `agent.input` under the session's limits and a
 * per-turn cancel signal, and reports it as the §4 result object (the same fields `hermes run --output
 * json` prints), so scripts read `status`, `final` and `usage` the same way everywhere.
 */
import type { Clock } from "../core/clock.ts";
import { errorMessage, ExitCode, RunError, ValidationError } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import { limitOf, type LimitReason, startTimeout } from "../agent/limits.ts";
import type { LiveSession } from "./live_session.ts";
import type { Logger } from "../core/log.ts";
import type { RunResult } from "./run_job.ts";
import type { CommandSource } from "../agent/slash.ts";
import type { Store } from "../store/store.ts";

export interface TurnOutcome {
  result: RunResult;
  /** The turn was stopped by a cancel request (`session.cancel`, ACP `session/cancel`). */
  cancelled: boolean;
  /** The limit that stopped the turn, if one did. */
  limit?: LimitReason;
  /** The last model call's finish reason (`stop`, `tool_calls`, `length`, `content_filter`, …). */
  finish_reason?: string;
}

export interface TurnOptions {
  store: Store;
  events: EventBus;
  clock: Clock;
  log: Logger;
  source: CommandSource;
  /** `session.cancel`: stops this turn at a safe point. */
  cancel: AbortSignal;
  /** The server is going away (SIGINT/SIGTERM). */
  interrupt?: AbortSignal;
}

/**
 * Runs `text` (a prompt or a slash command) as one turn. A ValidationError (unknown slash command) is
 * rethrown for the caller to answer as invalid input; every other failure becomes a result status.
 */
export async function runTurn(live: LiveSession, text: string, options: TurnOptions): Promise<TurnOutcome> {
  const { store, events, clock } = options;
  const id = live.id;
  const before = store.getSession(id)!;
  const turnsBefore = live.budget.turns;
  const started = clock.now();
  const timeout = startTimeout(live.job.spec.limits?.timeout);
  let compactions = 0;
  let finishReason: string | undefined;
  const unsubscribe = events.subscribe((event) => {
    if (event.session_id !== id) return;
    if (event.type === "compaction") compactions++;
    else if (event.type === "turn.end" && typeof event.finish_reason === "string") {
      finishReason = event.finish_reason;
    }
  });
  const signal = AbortSignal.any([
    options.cancel,
    timeout.signal,
    ...(options.interrupt ? [options.interrupt] : []),
  ]);

  let final = "";
  let status: RunResult["status"] = "success";
  let reason = "completed";
  let exitCode: number = ExitCode.success;
  let error: string | null = null;
  let limit: LimitReason | undefined;
  let cancelled = false;
  try {
    final = (await live.agent.input(text, { source: options.source, signal })).final;
    if (final.trim() === "") {
      [status, reason, exitCode] = ["failed", "empty_response", ExitCode.failed];
      error = "The model's final answer was empty";
    }
  } catch (caught) {
    const limitError = limitOf(caught, timeout.signal);
    if (limitError) {
      limit = limitError.limit;
      [status, reason, exitCode, error] = ["limit", limitError.limit, ExitCode.limit, limitError.message];
    } else if (options.cancel.aborted) {
      cancelled = true;
      [status, reason, exitCode, error] = [
        "interrupted",
        "cancelled",
        ExitCode.interrupted,
        "The turn was cancelled",
      ];
    } else if (options.interrupt?.aborted) {
      [status, reason, exitCode, error] = [
        "interrupted",
        "interrupted",
        ExitCode.interrupted,
        "The server was interrupted",
      ];
    } else if (caught instanceof ValidationError) {
      throw caught;
    } else {
      status = "failed";
      reason = caught instanceof RunError ? caught.reason : "error";
      exitCode = ExitCode.failed;
      error = errorMessage(caught);
      if (!(caught instanceof RunError)) options.log.debug((caught as Error)?.stack ?? String(caught));
    }
  } finally {
    timeout.clear();
    unsubscribe();
  }
  const after = store.getSession(id)!;
  const result: RunResult = {
    type: "result",
    status,
    exit_code: exitCode,
    session_id: id,
    job: live.job.spec.name,
    final,
    output: null,
    turns: live.budget.turns - turnsBefore,
    usage: {
      prompt_tokens: after.prompt_tokens - before.prompt_tokens,
      completion_tokens: after.completion_tokens - before.completion_tokens,
    },
    duration_ms: clock.now() - started,
    compactions,
    terminal_reason: reason,
    error,
  };
  return {
    result,
    cancelled,
    ...(limit ? { limit } : {}),
    ...(finishReason !== undefined ? { finish_reason: finishReason } : {}),
  };
}
