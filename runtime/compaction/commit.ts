/**
 * Committing a planned pass: one store transaction (lease re-checked, rows archived, replacements inserted,
 * the log row and the guard state written), then the `compaction` event and one `post_compaction` call.
 * The guard is judged by the estimate of the committed transcript, on the pass's token basis.
 */
import { errorMessage } from "../core/errors.ts";
import type { CompactionOutcome } from "../agent/seams.ts";
import {
  afterEffective,
  afterIneffective,
  afterSummaryFailure,
  afterSummarySuccess,
  GUARD_KEY,
  guardFrom,
  type GuardState,
} from "./guard.ts";
import { measuresOf, type Pass, type PassDeps, unchanged } from "./pass_outcome.ts";
import type { Plan } from "./plan.ts";
import { sumTokens } from "./rows.ts";

export async function commitPlan(
  deps: PassDeps,
  pass: Pass,
  facts: { nonce: string; before: number; ratio: number; plan: Extract<Plan, { type: "commit" }> },
): Promise<CompactionOutcome> {
  const { store, clock, settings, telemetry } = deps;
  const { sessionId } = pass;
  const { plan, before, ratio } = facts;
  const nextGuard = (state: GuardState, after: number): GuardState | null => {
    // Micro passes keep strikes as they are: folding one exchange is not meant to get under the threshold.
    if (plan.kind === "micro_summarize") return afterSummarySuccess(state);
    if (pass.reason === "proactive_prune") return null;
    if (plan.fallback) return afterFallback(state, { why: plan.fallback.why, after, now: clock.now() });
    const summarised = plan.kind === "summarize" ? afterSummarySuccess(state) : state;
    if (after >= settings.limit) {
      return pass.reason === "manual"
        ? null
        : afterIneffective(summarised, { now: clock.now(), windowMs: settings.breakerWindowMs });
    }
    // Strikes are about summaries: a prune that worked says nothing about the next summary call.
    return plan.kind === "summarize" ? afterEffective(summarised) : summarised;
  };
  /**
   * The fallback keeps the strikes that led to it (only a summary that worked clears them, so the breaker
   * does open on summaries refused again and again); a failed call arms the cooldown, a refused one strikes.
   */
  const afterFallback = (state: GuardState, at: { why: string; after: number; now: number }) => {
    const windowMs = settings.breakerWindowMs;
    let next = at.why === "summary_failed"
      ? afterSummaryFailure(state, at.now)
      : at.why === "refused_growth" || at.why === "not_a_summary"
      ? afterIneffective(afterSummarySuccess(state), { now: at.now, windowMs })
      : state;
    if (at.after >= settings.limit && at.why !== "refused_growth" && at.why !== "not_a_summary") {
      next = afterIneffective(next, { now: at.now, windowMs });
    }
    return next;
  };
  const result = await store.commitCompaction({
    sessionId,
    nonce: facts.nonce,
    now: clock.now(),
    kind: plan.kind,
    reason: pass.reason,
    archive: plan.archive,
    insert: plan.insert,
    beforeTokens: before,
    detail: { ...plan.detail, holder_pid: deps.identity.pid },
    measures: measuresOf(deps, pass, { absorbed: plan.absorbed, ratio, summaryTokens: plan.summaryTokens }),
    estimate: (committed) => Math.ceil(sumTokens(committed) * ratio),
    state: { key: GUARD_KEY, update: (stored, after) => nextGuard(guardFrom(stored), after) ?? undefined },
  });
  if (!result.committed) {
    return await unchanged(deps, pass, {
      outcome: "failed",
      kind: plan.kind,
      tokens: before,
      note: `nothing written: ${result.reason}`,
      why: "commit_refused",
    });
  }
  const outcome: CompactionOutcome = {
    changed: true,
    outcome: "committed",
    kind: plan.kind,
    before_tokens: before,
    after_tokens: result.afterTokens,
    messages_removed: result.log.messages_removed,
    occupancy: result.log.occupancy ?? telemetry.occupancy(result.afterTokens),
  };
  telemetry.committed({ sessionId, reason: pass.reason, outcome, compactionId: result.compactionId });
  // A pass holds the lease, so its fallback is never for want of it (that only shapes fallback_view.ts's view).
  if (plan.fallback && plan.fallback.why !== "lease_held") {
    telemetry.fellBack({
      sessionId,
      trigger: pass.reason,
      why: plan.fallback.why,
      note: plan.fallback.note,
      dropped: Number(plan.detail.dropped ?? 0),
      before,
      ...(plan.fallback.until !== undefined ? { until: plan.fallback.until } : {}),
    });
  }
  if (plan.kind === "summarize") telemetry.compactedTimes(sessionId, result.log.total_hard);
  try {
    await deps.hooks.postCompaction({
      session_id: sessionId,
      old_session_id: "",
      kind: plan.kind,
      reason: pass.reason,
      before_tokens: before,
      after_tokens: result.afterTokens,
      messages_removed: outcome.messages_removed,
    });
  } catch (error) {
    deps.log.warn(`post_compaction hook failed: ${errorMessage(error)}`);
  }
  return outcome;
}
