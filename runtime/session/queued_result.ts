/**
 * The result object of a queued run: the one its session produced, or, for a run that never produced one
 * (cancelled before it started, its worker died), one built here, so `runs wait` always answers with a
 * result and an exit code.
 */
import { ExitCode } from "../core/errors.ts";
import type { QueuedRun } from "../store/store.ts";
import { buildResult, type Ending, NO_USAGE, type RunResult } from "./outcome.ts";

/** The result object of a run that ended; one that never produced one is given one here. */
export function resultOfRun(run: QueuedRun): RunResult {
  if (run.result && typeof run.result === "object") return run.result as RunResult;
  const ending: Ending = run.status === "cancelled"
    ? {
      status: "interrupted",
      terminal_reason: "cancelled",
      exit_code: ExitCode.interrupted,
      error: `Run ${run.id} was cancelled${run.started_at === null ? " before it started" : ""}`,
    }
    : {
      status: "failed",
      terminal_reason: run.status === "crashed" ? "worker_died" : "error",
      exit_code: ExitCode.failed,
      error: run.note ?? `Run ${run.id} ended ${run.status}`,
    };
  const at = run.finished_at ?? run.submitted_at;
  return buildResult(ending, {
    session_id: run.session_id ?? "",
    job: run.job,
    final: "",
    output: null,
    turns: 0,
    before: NO_USAGE,
    after: NO_USAGE,
    started: run.started_at ?? at,
    ended: at,
    compactions: 0,
    labels: run.labels,
  });
}

/** What `runs wait` exits with: the run's own exit code. */
export function exitCodeOfRun(run: QueuedRun): number {
  if (run.exit_code !== null) return run.exit_code;
  return resultOfRun(run).exit_code;
}
