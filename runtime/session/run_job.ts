/**
 * Runs a job end to end: plan its inputs (new or resumed) → open a live session → run them as one turn
 * (turn.ts: limits, loops, structured output) → write `output.file` → finish the session → the §4 result,
 * which is also emitted as the last event. Used by `hermes run`, RPC `job.run` and the daemon.
 */
import { resolve } from "node:path";
import { errorMessage, ValidationError } from "../core/errors.ts";
import { redactValue } from "../core/redact.ts";
import type { ResolvedJob } from "../config/job.ts";
import { startTimeout } from "../agent/limits.ts";
import { isRecurringActive } from "../../loops/recurring_active.ts";
import { openSession, type OpenSessionOptions } from "./live_session.ts";
import { failedDelivery, type RunResult } from "./outcome.ts";
import { runTurn } from "./turn.ts";
import { outputFileScope, writeOutputFile } from "./output_file.ts";
import { type CommandSource, parseSlash } from "../agent/slash.ts";
import type { Store } from "../store/store.ts";

export type { RunResult } from "./outcome.ts";

export interface RunJobOptions extends OpenSessionOptions {
  /** Exit code for an interrupted run (130 for SIGINT, 143 for SIGTERM); `signal` interrupts. */
  interruptExitCode?: () => number;
  /** `-p`: replaces the job's prompt and steps. */
  prompt?: string;
  source?: CommandSource;
  /**
   * Delivers the result where a CI runner reads it (`GITHUB_OUTPUT`), before it is emitted or printed; may
   * turn it into a failure when that fails, so the result reported and the exit code agree.
   */
  publish?: (result: RunResult) => RunResult | Promise<RunResult>;
}

interface Progress {
  inputs: string[];
  next: number;
  /** The highest message id when `inputs[next]` was about to be sent: a user row after it means it was. */
  mark?: number;
}

const PROGRESS_KEY = "run.progress";

export async function runJob(options: RunJobOptions): Promise<RunResult> {
  const { job, events, clock, log } = options;
  let store = options.store;
  const spec = job.spec;
  const started = clock.now();
  // Before any model call: an output.file outside the job directory and write roots is exit 2.
  const outputScope = outputFileScope(job);
  const resumeId = options.resume === undefined ? undefined : await store.resolveSessionId(options.resume);
  const progress = await planInputs(store, resumeId, spec, options);
  const resumeFirst = resumeId !== undefined && await wasSent(store, resumeId, progress);

  // Started before the session opens: plugin start-up counts against limits.timeout too.
  const timeout = startTimeout(spec.limits?.timeout);
  let result: RunResult;
  let live;
  try {
    const signal = AbortSignal.any([timeout.signal, ...(options.signal ? [options.signal] : [])]);
    const { resume: _resume, ...sessionOptions } = options;
    live = await openSession({ ...sessionOptions, signal, ...(resumeId ? { resume: resumeId } : {}) });
    const sessionId = live.id;
    // From here every write goes through the session's redacting view (progress holds the prompts).
    store = live.store;
    await store.setState(sessionId, PROGRESS_KEY, progress);
    ({ result } = await runTurn(live, progress.inputs.slice(progress.next), {
      store,
      events,
      clock,
      log,
      source: options.source ?? "job",
      timeout: timeout.signal,
      started,
      drive: true,
      ...(options.signal ? { interrupt: options.signal } : {}),
      ...(options.interruptExitCode ? { interruptExitCode: options.interruptExitCode } : {}),
      ...(spec.output?.schema ? { schema: spec.output.schema } : {}),
      ...(resumeFirst ? { resumeFirst } : {}),
      beforeInput: async (index) => {
        const mark = Number((await store.transcriptVersion(sessionId)).split(":")[1]) || 0;
        await store.setState(sessionId, PROGRESS_KEY, { ...progress, next: progress.next + index, mark });
      },
      onInput: (index) =>
        store.setState(sessionId, PROGRESS_KEY, { inputs: progress.inputs, next: progress.next + index + 1 }),
    }));
  } finally {
    timeout.clear();
  }

  // Secrets are replaced in the result (final, output, error) before it is written, emitted or printed.
  result = redactValue(result, live.redact);
  if (result.status === "success" && spec.output?.file && outputScope) {
    const text = result.output !== null ? JSON.stringify(result.output, null, 2) + "\n" : result.final;
    const path = resolve(job.dir, spec.output.file);
    try {
      await writeOutputFile(outputScope, spec.output.file, text);
    } catch (error) {
      result = failedDelivery(result, {
        terminal_reason: "output_file_error",
        error: `Cannot write output.file ${path}: ${errorMessage(error)}`,
      });
    }
  }
  if (options.publish) result = await options.publish(result);
  await live.finish(result.status, result.terminal_reason);
  const { type: _type, session_id: _id, ...fields } = result;
  events.emit(live.id, { type: "result", ...fields });
  return result;
}

/**
 * The step a resumed run starts with was sent by the run that stopped: its user turn is stored, so it is
 * finished (agent.resume), not sent again. A slash command step is run again: its output is stored with
 * its line, so a stored one finished, and commands are cheap to repeat.
 */
async function wasSent(store: Store, sessionId: string, progress: Progress): Promise<boolean> {
  const text = progress.inputs[progress.next];
  const { mark } = progress;
  if (mark === undefined || text === undefined || parseSlash(text)) return false;
  return (await store.allMessages(sessionId)).some((m) =>
    m.id > mark && m.role === "user" && m.content === text
  );
}

/** What this run executes: `-p` replaces prompt and steps; a resumed run continues where it stopped. */
async function planInputs(
  store: Store,
  resumeId: string | undefined,
  spec: ResolvedJob["spec"],
  options: RunJobOptions,
): Promise<Progress> {
  if (options.prompt !== undefined) {
    if (options.prompt.trim() === "") {
      throw new ValidationError("Nothing to run: the prompt given with -p is empty");
    }
    return { inputs: [options.prompt], next: 0 };
  }
  if (resumeId) {
    const stored = await store.getState<Progress>(resumeId, PROGRESS_KEY);
    if (stored && stored.next < stored.inputs.length) return stored;
    // Steps done but a loop or heartbeat still active: the run goes straight to driving it.
    if (await isRecurringActive(store, resumeId)) return stored ?? { inputs: [], next: 0 };
    throw new ValidationError(
      `Cannot resume session ${resumeId}: it has nothing left to run (pass -p "prompt" to continue it)`,
    );
  }
  const inputs = [...(spec.prompt !== undefined ? [spec.prompt] : []), ...(spec.steps ?? [])]
    .filter((text) => text.trim() !== "");
  if (inputs.length === 0) {
    throw new ValidationError(`Nothing to run: job "${spec.name}" has no prompt or steps (pass -p "prompt")`);
  }
  return { inputs, next: 0 };
}
