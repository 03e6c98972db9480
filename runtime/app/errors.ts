/**
 * The domain errors the operations raise. They name no transport: each front-end maps them to its own
 * (exit codes in main.ts, JSON-RPC codes in rpc/methods.ts, ACP errors in acp/agent.ts), in one place.
 */
import { RunError } from "../core/errors.ts";
import type { RunResult } from "../session/outcome.ts";

export { NotFoundError, RunError, ValidationError } from "../core/errors.ts";
export { SessionBusyError } from "../store/errors.ts";
export { StoreUnavailableError } from "../store/retry.ts";

/** A turn stopped by `cancel`, running or queued; `result` is its result (interrupted, cancelled). */
export class TurnCancelledError extends RunError {
  readonly result: RunResult;
  constructor(result: RunResult) {
    super("Cancelled: the turn was stopped", { reason: "cancelled" });
    this.name = "TurnCancelledError";
    this.result = result;
  }
}

/** Refusal to delete or archive a session whose turn is running in this process. */
export class TurnRunningError extends RunError {
  readonly session_id: string;
  constructor(action: string, sessionId: string) {
    super(`Cannot ${action} session ${sessionId}: a turn is running (cancel it first)`, {
      reason: "session_busy",
    });
    this.name = "TurnRunningError";
    this.session_id = sessionId;
  }
}

/** Refusal to decide an approval that is decided already, or whose time is up (no run ends by it). */
export class ApprovalDecidedError extends Error {
  readonly approval_id: string;
  constructor(approvalId: string, status: string) {
    super(`Cannot decide approval ${approvalId}: it is ${status} already`);
    this.name = "ApprovalDecidedError";
    this.approval_id = approvalId;
  }
}
