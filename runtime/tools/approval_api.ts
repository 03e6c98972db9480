/**
 * The job's approver with `approval: {api: true, timeout}`: a call outside the rules is parked as a pending
 * approval in the store (its arguments redacted: it is written through the session's store outlet) and
 * announced as an `approval.requested` event; the run waits, holding no transaction, until a token with the
 * `approvals` scope decides it on any server sharing the store (`POST /v1/approvals/ID`), or the timeout
 * decides it `expired`. PostgreSQL wakes the waiting run at once (LISTEN/NOTIFY); a short poll stays as the
 * way of a store file and a fallback. A cancelled turn leaves it `cancelled`. Only `allowed` runs the call.
 */
import type { Clock } from "../core/clock.ts";
import type { EventInput } from "../core/events.ts";
import type { Approval, ApprovalStore } from "../store/store.ts";
import { newApprovalId } from "../store/ids.ts";
import type { ToolAsker } from "./gate.ts";

export const DEFAULT_API_APPROVAL_TIMEOUT = "1h";
const POLL_MS = 250;

export interface ApiApproverOptions {
  /** The session's store outlet (secrets replaced in what is written). */
  store: ApprovalStore;
  /** The session's event outlet. */
  emit: (event: EventInput<"approval.requested" | "approval.resolved">) => void;
  clock: Clock;
  job: string;
  /** The queued run the session works for, when it does. */
  run_id: string | null;
  timeoutMs: number;
  /** How often a waiting run looks at its approval when no notification came (ms). */
  pollMs?: number;
}

export function apiApprover(options: ApiApproverOptions): ToolAsker {
  const { store, clock, emit } = options;
  return async (request) => {
    const now = clock.now();
    const id = newApprovalId(now);
    let wake = new AbortController();
    // Listening before the approval exists: a decision made the moment it is listed still wakes the run.
    const stop = await store.watchApprovals((changed) => {
      if (changed === id) wake.abort();
    });
    try {
      const parked = await store.createApproval({
        id,
        run_id: options.run_id,
        session_id: request.session_id,
        job: options.job,
        tool: request.tool,
        tool_call_id: request.tool_call_id,
        server: request.server ?? null,
        arguments: request.args,
        subject: request.subject ?? null,
        reason: request.reason,
        rule: request.rule,
        created_at: now,
        expires_at: now + options.timeoutMs,
      });
      emit({
        type: "approval.requested",
        approval_id: id,
        run_id: options.run_id,
        tool: request.tool,
        tool_call_id: request.tool_call_id,
        ...(request.server !== undefined ? { server: request.server } : {}),
        // As stored: the outlet replaced the secrets.
        args: parked.arguments,
        reason: request.reason,
        rule: request.rule,
        ...(request.subject !== undefined ? { subject: request.subject } : {}),
        expires_at: parked.expires_at,
      });
      let decided: Approval | undefined;
      while (!decided) {
        const current = await store.getApproval(id);
        if (!current) throw new Error(`approval ${id} is gone from the store`);
        if (current.status !== "pending") {
          decided = current;
        } else if (request.signal.aborted || clock.now() >= current.expires_at) {
          const expired = !request.signal.aborted;
          const outcome = await store.decideApproval({
            id,
            status: expired ? "expired" : "cancelled",
            reason: expired ? "no decision before the timeout" : "the run stopped before a decision",
            by: null,
            now: clock.now(),
          });
          // A decision that came in first stands.
          decided = outcome?.approval ?? current;
        } else {
          const wait = Math.min(options.pollMs ?? POLL_MS, current.expires_at - clock.now());
          await clock.sleep(wait, AbortSignal.any([wake.signal, request.signal])).catch(() => {});
          if (wake.signal.aborted) wake = new AbortController();
        }
      }
      emit({
        type: "approval.resolved",
        approval_id: id,
        tool: request.tool,
        tool_call_id: request.tool_call_id,
        status: decided.status as Exclude<Approval["status"], "pending">,
        reason: decided.decision_reason,
        decided_by: decided.decided_by,
      });
      return decided.status === "allowed";
    } finally {
      await stop();
    }
  };
}
