/**
 * Runs input as one turn of a live session and reports it as an outcome carrying the result object: under the
 * job's limits (the `limits.timeout` signal, the session's budget), stoppable by a cancel or an interrupt
 * signal, with the `output.schema` check and its one repair turn. `hermes run` (its prompt and steps), RPC
 * `session.prompt` / `session.command` / `job.run`, ACP `session/prompt` and the daemon all run turns here;
 * outcome.ts says how a turn ended.
 */
import type { Clock } from "../core/clock.ts";
import { RunError, ValidationError } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import { type LimitReason, startTimeout } from "../agent/limits.ts";
import type { LiveSession } from "./live_session.ts";
import type { Logger } from "../core/log.ts";
import {
  buildResult,
  type Ending,
  endingOfAnswer,
  endingOfError,
  type RunResult,
  type Stop,
  type UsageCounters,
} from "./outcome.ts";
import type { SchemaCheck } from "./output_schema.ts";
import type { JsonSchemaCheck } from "../config/json_schema.ts";
import type { CommandSource } from "../agent/slash.ts";
import type { SessionStore } from "../store/store.ts";
import { StoreUnavailableError } from "../store/retry.ts";

export interface TurnOutcome {
  result: RunResult;
  /** The turn was stopped by a cancel request (`session.cancel`, ACP `session/cancel`). */
  cancelled: boolean;
  /** The limit that stopped the turn, if one did. */
  limit?: LimitReason;
  /** The last model call's finish reason (`stop`, `tool_calls`, `length`, `content_filter`, …). */
  finish_reason?: string;
  /** The input was refused (an unknown slash command): servers answer the request as invalid input. */
  refused?: ValidationError;
}

export interface TurnOptions
  extends Pick<Stop, "cancel" | "interrupt" | "interruptExitCode" | "interrupted"> {
  store: SessionStore;
  events: EventBus;
  clock: Clock;
  log: Logger;
  source: CommandSource;
  /** Checks the final answer against this JSON Schema, with one repair turn (`output.schema`). */
  schema?: Record<string, unknown>;
  /** Keeps driving an active `/loop` or `/heartbeat` until it ends (`hermes run`). */
  drive?: boolean;
  /** A `limits.timeout` already running (`hermes run` starts it before the session opens); else one starts now. */
  timeout?: AbortSignal;
  /** When the work began (default: now). */
  started?: number;
  /**
   * Called before each input runs and after it has run (`hermes run` records each step for `--resume`);
   * `step` names the step record the input's user turn is sent with, once.
   */
  beforeInput?: (index: number) => Promise<{ step?: number } | void>;
  onInput?: (index: number) => unknown;
  /** The session's counters as the turn starts, when the caller knows them (a session it just created). */
  usageBefore?: UsageCounters;
}

/**
 * Runs `inputs` (prompts or slash commands) in order as one turn. Every failure becomes the result's status;
 * an invalid input is also handed back as `refused`.
 */
export async function runTurn(
  live: LiveSession,
  inputs: string | readonly string[],
  options: TurnOptions,
): Promise<TurnOutcome> {
  const { store, events, clock, log, source } = options;
  const id = live.id;
  const started = options.started ?? clock.now();
  const before = options.usageBefore ?? (await store.getSession(id))!;
  // Limits count per prompt: this turn's budget starts fresh.
  const endBudget = live.budget.begin();
  const callsBefore = live.budget.calls;
  // A timeout passed in belongs to the caller, who clears it.
  const timeout = options.timeout
    ? { signal: options.timeout, clear: () => {} }
    : startTimeout(live.job.spec.limits?.timeout);
  let compactions = 0;
  let finishReason: string | undefined;
  // output.schema is compiled while the model works, not before its first request (ajv costs tens of ms to
  // load and as much to compile): from the first model call's end or retry, else once the input has run. A
  // schema ajv refuses stops the turn as invalid input, naming file:line:col.
  const schemaRefused = new AbortController();
  let compiling: Promise<JsonSchemaCheck> | undefined;
  const compileSchema = (schema: Record<string, unknown>) => {
    if (!compiling) {
      const { job } = live;
      // Its module too: a turn without output.schema never needs it, one with it not before the model answers.
      compiling = import("../config/output_schema_check.ts").then(({ compileOutputSchema }) =>
        compileOutputSchema(schema, job.locate ?? (() => job.path ?? "job"))
      );
      compiling.catch((error) => schemaRefused.abort(error));
    }
    return compiling;
  };
  const unsubscribe = events.subscribe((event) => {
    if (event.session_id !== id) return;
    if (event.type === "compaction") compactions++;
    else if (event.type === "turn.end") finishReason = event.finish_reason;
    if ((event.type === "turn.end" || event.type === "provider.retry") && options.schema) {
      compileSchema(options.schema);
    }
  });
  const signal = AbortSignal.any([
    timeout.signal,
    schemaRefused.signal,
    ...[options.cancel, options.interrupt].filter((s) => s !== undefined),
  ]);

  let final = "";
  let output: unknown = null;
  let ending: Ending;
  let refused: ValidationError | undefined;
  try {
    const list = typeof inputs === "string" ? [inputs] : inputs;
    for (const [index, text] of list.entries()) {
      finishReason = undefined; // a slash command's output has none
      const step = (await options.beforeInput?.(index))?.step;
      final =
        (await live.agent.input(text, { source, signal, ...(step !== undefined ? { step } : {}) })).final;
      await options.onInput?.(index);
    }
    let reason = "completed";
    if (options.drive && await live.recurring.isActive(id)) {
      // An active /loop or /heartbeat keeps the turn going until it ends, a limit hits, or a signal.
      const end = await live.recurring.drive(live.agent, { signal });
      if (end.final) final = end.final;
      if (end.reason === "loop_done" || end.reason === "loop_paused") reason = end.reason;
    }
    let check: SchemaCheck | undefined;
    if (options.schema) {
      const [compiled, { checkAgainstSchema, repairPrompt }] = await Promise.all([
        compileSchema(options.schema),
        import("./output_schema.ts"),
      ]);
      check = checkAgainstSchema(final, compiled);
      if (!check.ok) {
        log.warn(`final answer does not match output.schema (${check.error}); asking for a repair`);
        final = (await live.agent.prompt(repairPrompt(check.error), { source, signal })).final;
        check = checkAgainstSchema(final, compiled);
      }
      if (check.ok) output = check.value;
    }
    // One answer can go past limits.max_tokens by itself: it ends with the limit, not as a success.
    const over = live.budget.exceeded();
    ending = over ? endingOfError({ caught: over, timeout: timeout.signal }) : endingOfAnswer({
      final,
      reason,
      ...(check ? { schema: check } : {}),
      ...(finishReason !== undefined ? { finish_reason: finishReason } : {}),
    });
  } catch (thrown) {
    // A refused output.schema stops the model call: the refusal, not the abort, is what ended the turn.
    const caught = schemaRefused.signal.aborted ? schemaRefused.signal.reason : thrown;
    ending = endingOfError({ ...options, caught, timeout: timeout.signal });
    if (caught instanceof ValidationError && ending.terminal_reason === "invalid_input") refused = caught;
    else if (ending.status === "failed" && !(caught instanceof RunError)) {
      log.debug((caught as Error)?.stack ?? String(caught));
    }
  } finally {
    timeout.clear();
    unsubscribe();
    endBudget();
  }
  let after: UsageCounters = before;
  try {
    after = (await store.getSession(id))!;
  } catch (caught) {
    // The turn's work is done or failed already; only its usage cannot be read back. The result says the
    // store was unavailable rather than claim a success the store may not have recorded.
    if (!(caught instanceof StoreUnavailableError)) throw caught;
    if (ending.status === "success") ending = endingOfError({ caught, timeout: timeout.signal });
  }
  // The result leaves through the session's outlet: front-ends print and return it as it is.
  const result = live.outlets.result(buildResult(ending, {
    session_id: id,
    job: live.job.spec.name,
    labels: live.labels,
    final,
    output,
    turns: live.budget.calls - callsBefore,
    before,
    after,
    started,
    ended: clock.now(),
    compactions,
    sandbox: live.sandbox,
  }));
  return {
    result,
    cancelled: ending.terminal_reason === "cancelled",
    ...(ending.status === "limit" ? { limit: ending.terminal_reason } : {}),
    ...(finishReason !== undefined ? { finish_reason: finishReason } : {}),
    ...(refused ? { refused } : {}),
  };
}
