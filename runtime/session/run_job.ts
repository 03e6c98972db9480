/**
 * Runs a job end to end: a live session (new or resumed) → prompt and steps → structured output →
 * the §4 result object, which is also emitted as the last event.
 */
import { errorMessage, ExitCode, RunError, ValidationError } from "../core/errors.ts";
import type { ResolvedJob } from "../config/job.ts";
import { limitOf, startTimeout } from "../agent/limits.ts";
import { LOOP_KEY } from "../../loops/loop_state.ts";
import { HEARTBEAT_KEY } from "../../loops/heartbeat_state.ts";
import { openSession, type OpenSessionOptions } from "./live_session.ts";
import { checkAgainstSchema, repairPrompt } from "./output_schema.ts";
import type { CommandSource } from "../agent/slash.ts";
import type { Store } from "../store/store.ts";

export interface RunJobOptions extends OpenSessionOptions {
  /** Exit code for an interrupted run (130 for SIGINT, 143 for SIGTERM); `signal` interrupts. */
  interruptExitCode?: () => number;
  /** `-p`: replaces the job's prompt and steps. */
  prompt?: string;
  source?: CommandSource;
}

export interface RunResult {
  type: "result";
  status: "success" | "failed" | "limit" | "interrupted";
  exit_code: number;
  session_id: string;
  job: string;
  final: string;
  output: unknown;
  turns: number;
  usage: { prompt_tokens: number; completion_tokens: number };
  duration_ms: number;
  compactions: number;
  terminal_reason: string;
  error: string | null;
}

interface Progress {
  inputs: string[];
  next: number;
}

const PROGRESS_KEY = "run.progress";

export async function runJob(options: RunJobOptions): Promise<RunResult> {
  const { job, store, events, clock, log } = options;
  const spec = job.spec;
  const started = clock.now();
  const resumeId = options.resume === undefined ? undefined : store.resolveSessionId(options.resume);
  const progress = planInputs(store, resumeId, spec, options);

  const timeout = startTimeout(spec.limits?.timeout);
  const signal = AbortSignal.any([timeout.signal, ...(options.signal ? [options.signal] : [])]);
  const { resume: _resume, ...sessionOptions } = options;
  const live = await openSession({ ...sessionOptions, signal, ...(resumeId ? { resume: resumeId } : {}) })
    .catch((error) => {
      timeout.clear();
      throw error;
    });
  const sessionId = live.id;
  store.setState(sessionId, PROGRESS_KEY, progress);
  let compactions = 0;
  const unsubscribe = events.subscribe((e) => {
    if (e.session_id === sessionId && e.type === "compaction") compactions++;
  });

  let final = "";
  let output: unknown = null;
  let status: RunResult["status"] = "success";
  let reason = "completed";
  let exitCode: number = ExitCode.success;
  let error: string | null = null;
  try {
    const source = options.source ?? "job";
    for (let i = progress.next; i < progress.inputs.length; i++) {
      final = (await live.agent.input(progress.inputs[i]!, { source, signal })).final;
      store.setState(sessionId, PROGRESS_KEY, { ...progress, next: i + 1 });
    }
    // An active /loop or /heartbeat keeps the run going until it ends, a limit hits, or a signal.
    if (live.recurring.isActive(sessionId)) {
      const end = await live.recurring.drive(live.agent, { signal });
      if (end.final) final = end.final;
      if (end.reason === "loop_done" || end.reason === "loop_paused") reason = end.reason;
    }
    if (spec.output?.schema) {
      let check = checkAgainstSchema(final, spec.output.schema);
      if (!check.ok) {
        log.warn(`final answer does not match output.schema (${check.error}); asking for a repair`);
        final = (await live.agent.prompt(repairPrompt(check.error), { source, signal })).final;
        check = checkAgainstSchema(final, spec.output.schema);
      }
      if (check.ok) output = check.value;
      else {
        [status, reason, exitCode] = ["failed", "schema_mismatch", ExitCode.failed];
        error = `The final answer does not match output.schema: ${check.error}`;
      }
    }
    if (status === "success" && final.trim() === "") {
      [status, reason, exitCode] = ["failed", "empty_response", ExitCode.failed];
      error = "The model's final answer was empty";
    }
  } catch (caught) {
    const limit = limitOf(caught, timeout.signal);
    if (limit) {
      [status, reason, exitCode, error] = ["limit", limit.limit, ExitCode.limit, limit.message];
    } else if (options.signal?.aborted) {
      status = "interrupted";
      reason = "interrupted";
      exitCode = options.interruptExitCode?.() ?? ExitCode.interrupted;
      error = "The run was interrupted";
    } else if (caught instanceof ValidationError) {
      [status, reason, exitCode, error] = ["failed", "invalid_input", caught.exitCode, caught.message];
    } else {
      status = "failed";
      reason = caught instanceof RunError ? caught.reason : "error";
      exitCode = ExitCode.failed;
      error = errorMessage(caught);
      if (!(caught instanceof RunError)) log.debug((caught as Error)?.stack ?? String(caught));
    }
  } finally {
    timeout.clear();
  }

  if (status === "success" && spec.output?.file) {
    writeOutputFile(
      job.dir,
      spec.output.file,
      output !== null ? JSON.stringify(output, null, 2) + "\n" : final,
    );
  }
  await live.finish(status, reason);
  const row = store.getSession(sessionId)!;
  const result: RunResult = {
    type: "result",
    status,
    exit_code: exitCode,
    session_id: sessionId,
    job: spec.name,
    final,
    output,
    turns: live.budget.turns,
    usage: {
      prompt_tokens: row.prompt_tokens - live.opened.prompt_tokens,
      completion_tokens: row.completion_tokens - live.opened.completion_tokens,
    },
    duration_ms: clock.now() - started,
    compactions,
    terminal_reason: reason,
    error,
  };
  unsubscribe();
  const { type: _type, session_id: _id, ...fields } = result;
  events.emit(sessionId, { type: "result", ...fields });
  return result;
}

/** What this run executes: `-p` replaces prompt and steps; a resumed run continues where it stopped. */
function planInputs(
  store: Store,
  resumeId: string | undefined,
  spec: ResolvedJob["spec"],
  options: RunJobOptions,
): Progress {
  if (options.prompt !== undefined) {
    if (options.prompt.trim() === "") {
      throw new ValidationError("Nothing to run: the prompt given with -p is empty");
    }
    return { inputs: [options.prompt], next: 0 };
  }
  if (resumeId) {
    const stored = store.getState<Progress>(resumeId, PROGRESS_KEY);
    if (stored && stored.next < stored.inputs.length) return stored;
    // Steps done but a loop or heartbeat still active: the run goes straight to driving it.
    if (hasActiveRecurring(store, resumeId)) return stored ?? { inputs: [], next: 0 };
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

function hasActiveRecurring(store: Store, sessionId: string): boolean {
  const active = (key: string) => store.getState<{ status?: string }>(sessionId, key)?.status === "active";
  return active(LOOP_KEY) || active(HEARTBEAT_KEY);
}

function writeOutputFile(dir: string, file: string, text: string): void {
  const path = file.startsWith("/") ? file : `${dir}/${file}`;
  const parent = path.replace(/\/[^/]*$/, "");
  if (parent) Deno.mkdirSync(parent, { recursive: true });
  Deno.writeTextFileSync(path, text);
}
