/**
 * The `run` operation: a job end to end. Plan its inputs (new or resumed) → open a live session → run them
 * as one turn (session/turn.ts: limits, loops, structured output) → write `output.file` → deliver → finish
 * the session → the result, which is also emitted as the last event. `hermes run`, RPC `job.run` and the
 * daemon call it through the App (app.ts).
 */
import { resolve } from "../core/path.ts";
import { errorMessage, Interruption, ValidationError } from "../core/errors.ts";
import type { ResolvedJob } from "../config/job.ts";
import { startTimeout } from "../agent/limits.ts";
import { type LiveSession, openSession, type OpenSessionOptions } from "../session/live_session.ts";
import {
  buildResult,
  type Ending,
  endingOfError,
  failedDelivery,
  NO_USAGE,
  type RunResult,
} from "../session/outcome.ts";
import { parseDuration } from "../core/duration.ts";
import { StoreUnavailableError } from "../store/retry.ts";
import { retryScope } from "../store/retrying_store.ts";
import { runTurn } from "../session/turn.ts";
import {
  busyEnding,
  busyMessage,
  holdWorkspace,
  workingTree,
  type WorkspaceHold,
  writesItsTree,
} from "../session/workspace_lock.ts";
import { parseSlash } from "../agent/slash.ts";
import type { InputSource } from "../core/types.ts";
import type { EventBus } from "../core/events.ts";
import type { SessionStore } from "../store/store.ts";
import { newSessionId } from "../store/ids.ts";
import { currentProcess } from "../core/process_identity.ts";
// A run's own worktree, output.file, agents and a resumed session's loops are imported by the runs that have
// them: the path to a plain run's first model request loads none of them.
import type { Worktree } from "../session/worktree.ts";
import type { DelegationScope } from "./delegate.ts";

export type { RunResult } from "../session/outcome.ts";

export interface RunJobOptions extends OpenSessionOptions {
  /** `-p`: replaces the job's prompt and steps. */
  prompt?: string;
  source?: InputSource;
  /**
   * Delivers the result where a CI runner reads it (`GITHUB_OUTPUT`), before it is emitted or printed; may
   * turn it into a failure when that fails, so the result reported and the exit code agree.
   */
  publish?: (result: RunResult) => RunResult | Promise<RunResult>;
  /**
   * Where a run's own worktree is made (`workspace.isolation: worktree`): HERMES_HOME/worktrees; without
   * it, a `hermes-worktrees` folder in the repository's git directory.
   */
  worktrees?: string;
  /** A delegated task's place in its tree of delegations (delegate.ts); absent for a root run. */
  delegation?: DelegationScope;
}

/**
 * What a run executes, kept for `--resume`: its inputs and the session's step number of the first (steps are
 * numbered across the session's runs). Each step's record (store.startStep) says whether it is done and
 * whether its user turn was sent, so a resume after any number of kills sends no step twice.
 */
interface Progress {
  inputs: string[];
  /** The first input a run starts from (the first not done). */
  next: number;
  /** Absent until the planning run opened the session, and in progress stored before step records. */
  first?: number;
}

const PROGRESS_KEY = "run.progress";
/** A delegating session's record of the child a delegate call started: `run.task.<tool call id>`. */
const TASK_KEY = "run.task";
/** A delegated task's result, kept in its own session before it ends. */
const RESULT_KEY = "run.result";

/**
 * How a delegated task's session stands when its delegating run is resumed: ended with a kept result (a
 * session the killed run left `running` after keeping it is ended now, so none stays orphaned), opened
 * (resume it), or never opened.
 */
async function storedChild(
  store: SessionStore,
  childId: string,
  options: RunJobOptions,
): Promise<{ result?: RunResult; opened: boolean }> {
  const session = await store.getSession(childId);
  if (!session) return { opened: false };
  const result = await store.getState<RunResult>(childId, RESULT_KEY);
  if (!result) return { opened: true };
  if (
    session.status === "running" && (await store.claimSession(childId, currentProcess(options.host))).claimed
  ) {
    await store.updateSession(childId, {
      status: result.status,
      terminal_reason: result.terminal_reason,
      ended_at: options.clock.now(),
      owner_pid: null,
    });
  }
  return { result, opened: true };
}

export async function runJob(options: RunJobOptions): Promise<RunResult> {
  const { events, clock, log } = options;
  let job = options.job;
  const spec = job.spec;
  // The job's store.retry, and each retry a `store.retry` event of this run's session once it has one.
  let eventsTo: string | undefined;
  let store = retryScope(options.store, {
    ...(spec.store?.retry !== undefined ? { budgetMs: parseDuration(spec.store.retry) } : {}),
    onRetry: (notice) => {
      if (eventsTo !== undefined) events.emit(eventsTo, { type: "store.retry", ...notice });
    },
  });
  const started = clock.now();
  // Before any model call: an output.file outside the job directory and write roots is exit 2.
  const outputScope = spec.output?.file === undefined
    ? undefined
    : (await import("../session/output_file.ts")).outputFileScope(job);
  const resumeId = options.resume === undefined ? undefined : await store.resolveSessionId(options.resume);
  // A new session's id is known up front, so store retries while it opens are its events too.
  const newId = resumeId === undefined ? options.id ?? newSessionId(clock.now()) : undefined;
  eventsTo = resumeId ?? newId;
  let progress = await planInputs(store, resumeId, spec, options);
  // The run's own worktree: made for a new session, found again (or checked out again) for a resumed one.
  const worktrees = resumeId !== undefined || spec.workspace?.isolation === "worktree"
    ? await import("../session/worktree.ts")
    : undefined;
  let worktree: Worktree | undefined;
  if (resumeId !== undefined) {
    const stored = await store.getState<Worktree>(resumeId, worktrees!.WORKTREE_KEY);
    if (stored) worktree = await worktrees!.reopenWorktree(stored);
  } else if (spec.workspace?.isolation === "worktree") {
    worktree = await worktrees!.createWorktree(job.dir, spec.workspace, {
      sessionId: newId!,
      root: options.worktrees,
    });
  }
  if (worktree) job = worktrees!.jobInWorktree(job, worktree);
  // With agents: the delegate tool, whose children are sessions of their own under this one.
  let live: LiveSession | undefined;
  const delegate = Object.keys(spec.agents ?? {}).length ? await import("./delegate.ts") : undefined;
  const delegated = delegate
    ? delegate.delegation({
      job,
      scope: options.delegation ?? delegate.rootScope(spec),
      newId: () => newSessionId(clock.now()),
      emit: (event) => {
        if (live) live.outlets.events.emit(live.id, event);
      },
      ledger: {
        started: (toolCallId) => store.getState<string>(eventsTo!, `${TASK_KEY}.${toolCallId}`),
        start: (toolCallId, childId) => store.setState(eventsTo!, `${TASK_KEY}.${toolCallId}`, childId),
        child: (childId) => storedChild(store, childId, options),
      },
      run: (child) => {
        const {
          prompt: _p,
          resume: _r,
          publish: _pub,
          onDelta: _d,
          record: _rec,
          replay: _rep,
          ...inherited
        } = options;
        return runJob({
          ...inherited,
          job: child.job,
          ...(child.resume ? { resume: child.id } : { prompt: child.prompt, id: child.id }),
          parentId: eventsTo!,
          parentBudget: live!.budget,
          signal: child.signal,
          delegation: child.scope,
          source: "job",
          ...(child.model !== undefined ? { model: child.model } : {}),
        });
      },
    })
    : undefined;

  // Started before the session opens: plugin start-up counts against limits.timeout too.
  const timeout = startTimeout(spec.limits?.timeout);
  let result: RunResult;
  let stopWatching = () => {};
  let workspaceHold: WorkspaceHold | undefined;
  try {
    const signal = AbortSignal.any([timeout.signal, ...(options.signal ? [options.signal] : [])]);
    const { resume: _resume, ...sessionOptions } = options;
    try {
      live = await openSession({
        ...sessionOptions,
        job,
        store,
        signal,
        ...(resumeId ? { resume: resumeId } : {}),
        ...(newId ? { id: newId } : {}),
        ...(delegated ? { extraTools: [delegated.tool] } : {}),
      });
    } catch (error) {
      // A session that never opened leaves no worktree behind.
      if (worktree && !resumeId) {
        await worktrees!.removeWorktree(worktree, { keepBranch: false }).catch(() => {});
      }
      throw error;
    }
    const sessionId = eventsTo = live.id;
    if (delegated) stopWatching = watchTree(events, live);
    if (worktree && !resumeId) await live.store.setState(sessionId, worktrees!.WORKTREE_KEY, worktree);
    // From here every write goes through the session's redacting view (progress holds the prompts).
    store = live.store;
    // A session this run opened new has no steps yet to read.
    const first = progress.first ??
      (resumeId === undefined ? 0 : (await store.sessionSteps(sessionId)).at(-1)?.step ?? 0) + 1 -
        progress.next;
    progress = { ...progress, first };
    await store.setState(sessionId, PROGRESS_KEY, progress);
    const { inputs, next } = progress;
    // One writer per checkout: a run that may write the tree it works in (not its own worktree) holds it.
    if (!worktree && spec.workspace?.shared !== true && writesItsTree(job.spec)) {
      const taken = await holdWorkspace(store, {
        path: workingTree(job.dir),
        sessionId,
        host: options.host,
        clock,
        log,
      });
      if ("busy" in taken) {
        throw new WorkspaceBusy(busyMessage(taken.busy));
      }
      workspaceHold = taken.hold;
    }
    ({ result } = await runTurn(live, inputs.slice(next), {
      store,
      events,
      clock,
      log,
      source: options.source ?? "job",
      timeout: timeout.signal,
      started,
      drive: true,
      // A session this run created has done nothing yet: its counters are not read back to learn so.
      ...(resumeId === undefined ? { usageBefore: NO_USAGE } : {}),
      ...(options.signal ? { interrupt: options.signal } : {}),
      // A process signal names its exit code in the abort reason (130 SIGINT, 143 SIGTERM).
      interruptExitCode: () => interruptionCode(options.signal?.reason),
      ...(spec.output?.schema ? { schema: spec.output.schema } : {}),
      beforeInput: async (index) => {
        const text = inputs[next + index]!;
        const step = first + next + index;
        const record = await store.startStep(sessionId, { step, input: text });
        if (record.attempt > 1 && record.message_seq !== null) {
          log.info(
            `step ${step} of session ${sessionId} (attempt ${record.attempt}) was sent by a run that stopped: ` +
              "finishing it from the transcript, not sending it again",
          );
        }
        // A slash command is run again instead: its output is stored with its line, and commands are cheap.
        return parseSlash(text) ? {} : { step };
      },
      onInput: (index) => store.finishStep(sessionId, first + next + index),
    }));
  } catch (error) {
    if (error instanceof WorkspaceBusy && live) {
      result = refusedResult(live, busyEnding(error.message), { started, ended: clock.now() });
    } else {
      // The store stayed unreachable past store.retry outside the turn (recording progress): the run
      // still ends with its result, as one that failed.
      if (!(error instanceof StoreUnavailableError) || !live) {
        await workspaceHold?.release();
        throw error;
      }
      result = storeUnavailableResult(live, error, { started, ended: clock.now() });
    }
  } finally {
    timeout.clear();
    stopWatching();
  }

  if (live.instructions.length) result = { ...result, instructions: [...live.instructions] };
  if (worktree) {
    try {
      result = { ...result, workspace: await worktrees!.finishWorktree(worktree) };
    } catch (error) {
      log.warn(`Cannot report the worktree ${worktree.path}: ${errorMessage(error)}`);
    }
  }
  if (delegated) result = delegate!.withAgents(result, delegated.runs);
  // The result (final, output, error) leaves through the session's outlet before it is written or returned.
  result = live.outlets.result(result);
  if (result.status === "success" && spec.output?.file && outputScope) {
    const text = result.output !== null ? JSON.stringify(result.output, null, 2) + "\n" : result.final;
    const path = resolve(job.dir, spec.output.file);
    try {
      const { writeOutputFile } = await import("../session/output_file.ts");
      await writeOutputFile(outputScope, spec.output.file, text, job.protect);
    } catch (error) {
      result = failedDelivery(result, {
        terminal_reason: "output_file_error",
        error: `Cannot write output.file ${path}: ${errorMessage(error)}`,
      });
    }
  }
  if (options.publish) result = await options.publish(result);
  // A delegated task keeps its result before its session ends: the delegating run, resumed after a kill,
  // takes it from here instead of running the task again.
  if (options.delegation) await store.setState(live.id, RESULT_KEY, result);
  try {
    await live.finish(result.status, result.terminal_reason);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // The end could not be recorded: the session stays resumable (its owner, this process, is gone by then).
    result = failedDelivery(result, { terminal_reason: "store_unavailable", error: error.message });
  }
  await workspaceHold?.release();
  const { type: _type, schema_version: _version, session_id: _id, ...fields } = result;
  // A delegated task's result is its parent's agent.end: a stream's `result` event stays the run's own last.
  if (!options.delegation) live.outlets.events.emit(live.id, { type: "result", ...fields });
  return result;
}

/**
 * A delegating session waits in its delegate calls while its tasks work under their own session ids: their
 * events, and those of the tasks they delegate in turn, are its progress too, so a long task does not make
 * it look stalled (runtime/session/owner_lease.ts).
 */
function watchTree(events: EventBus, live: LiveSession): () => void {
  const tree = new Set([live.id]);
  return events.subscribe((event) => {
    if (!tree.has(event.session_id)) return;
    if (event.type === "agent.start") tree.add(event.child_session_id);
    if (event.session_id !== live.id) live.progress();
  });
}

/** The first of `progress`'s inputs whose step is not done (progress from before step records: `next`). */
async function firstPending(store: SessionStore, sessionId: string, progress: Progress): Promise<number> {
  const { first } = progress;
  if (first === undefined) return progress.next;
  const done = new Set(
    (await store.sessionSteps(sessionId)).filter((r) => r.status === "done").map((r) => r.step),
  );
  let next = progress.next;
  while (next < progress.inputs.length && done.has(first + next)) next++;
  return next;
}

/** What this run executes: `-p` replaces prompt and steps; a resumed run continues where it stopped. */
async function planInputs(
  store: SessionStore,
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
    const next = stored ? await firstPending(store, resumeId, stored) : 0;
    if (stored && next < stored.inputs.length) return { ...stored, next };
    // Steps done but a loop or heartbeat still active: the run goes straight to driving it.
    const { isRecurringActive } = await import("../../loops/recurring_active.ts");
    if (await isRecurringActive(store, resumeId)) {
      return stored ? { ...stored, next } : { inputs: [], next: 0 };
    }
    // Killed after its last step was done, before the run ended: the step is finished again from the
    // transcript (its stored answer is the result; nothing is sent), so the run reports how it ended.
    const last = stored?.inputs.at(-1);
    if (stored && last !== undefined && !parseSlash(last) && stored.first !== undefined) {
      if ((await store.getSession(resumeId))?.status === "running") return { ...stored, next: next - 1 };
    }
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

/** The result of a run the store failed under, outside a turn (which reports its own failures). */
function storeUnavailableResult(
  live: LiveSession,
  error: StoreUnavailableError,
  times: { started: number; ended: number },
): RunResult {
  return buildResult(endingOfError({ caught: error, timeout: new AbortController().signal }), {
    session_id: live.id,
    job: live.job.spec.name,
    labels: live.labels,
    final: "",
    output: null,
    turns: 0,
    before: NO_USAGE,
    after: NO_USAGE,
    ...times,
    compactions: 0,
    sandbox: live.sandbox,
  });
}

/** Another session writes the run's checkout (session/workspace_lock.ts). */
class WorkspaceBusy extends Error {}

/** The result of a run refused before its first input: it failed with `ending`, nothing was sent. */
function refusedResult(
  live: LiveSession,
  ending: Ending,
  times: { started: number; ended: number },
): RunResult {
  return buildResult(ending, {
    session_id: live.id,
    job: live.job.spec.name,
    labels: live.labels,
    final: "",
    output: null,
    turns: 0,
    before: NO_USAGE,
    after: NO_USAGE,
    ...times,
    compactions: 0,
    sandbox: live.sandbox,
  });
}

function interruptionCode(reason: unknown): number | undefined {
  return reason instanceof Interruption ? reason.exitCode : undefined;
}
