/**
 * One compaction pass (docs/compaction.md): the guards of automatic passes (breaker, cooldown), the durable lease, the
 * plan (hard.ts, micro.ts, proactive.ts), then the commit (commit.ts) or a pass that changed nothing — each
 * logged once (telemetry.ts). The lease is held, and refreshed, across a summary call; no transaction is.
 */
import { errorMessage } from "../core/errors.ts";
import type { Usage } from "../core/types.ts";
import { roundUsd } from "../core/usd.ts";
import { costOf } from "../providers/pricing.ts";
import type { ProcessIdentity } from "../core/process_identity.ts";
import type { CompactionOutcome } from "../agent/seams.ts";
import type { CompactionStore, SessionStore } from "../store/store.ts";
import { commitPlan } from "./commit.ts";
import { measure } from "./estimate.ts";
import {
  afterIneffective,
  afterSummaryFailure,
  afterSummarySuccess,
  type GuardBlock,
  guardBlock,
  type GuardState,
  readGuard,
  writeGuard,
} from "./guard.ts";
import { planHard } from "./hard.ts";
import { planMicro } from "./micro.ts";
import type { PlanContext } from "./plan.ts";
import { proactivePlan } from "./proactive.ts";
import { withNotesFollowed } from "./read_notes.ts";
import { loadPlanRows, type PlanRow } from "./rows.ts";
import { KIND_OF, type Pass, type PassDeps, unchanged } from "./pass_outcome.ts";
import { scaledTo } from "./settings.ts";
import { summariseMiddle } from "./summary_call.ts";

export async function runPass(deps: PassDeps, pass: Pass): Promise<CompactionOutcome> {
  pass.signal?.throwIfAborted();
  const { store, clock, log, settings, calibration } = deps;
  const { sessionId } = pass;
  // The breaker and cooldowns stop summary calls, nothing else: a hard pass goes on to the fallback (it
  // must never let an over-window request out), pruning needs no model.
  let summaryBlocked: GuardBlock | undefined;
  if (pass.reason !== "manual" && pass.mode !== "prune") {
    const block = guardBlock(await readGuard(store, sessionId), clock.now());
    if (block && pass.mode === "hard") summaryBlocked = block;
    else if (block) {
      return await unchanged(deps, pass, {
        outcome: block.reason,
        tokens: await calibration.estimate(sessionId),
        note: block.note,
        why: block.reason,
        until: block.until,
      });
    }
  }
  const holder: ProcessIdentity = { ...deps.identity, nonce: crypto.randomUUID() };
  const taken = await store.acquireLease({ sessionId, holder, now: clock.now(), ttlMs: settings.leaseTtlMs });
  if (!taken.acquired) {
    const { holder: other, expires_at } = taken.current;
    return await unchanged(deps, pass, {
      outcome: "nothing_to_do",
      tokens: await calibration.estimate(sessionId),
      why: "lease_held",
      note: `another compaction holds the lease (pid ${other.pid} on ${other.host}, until ${
        new Date(expires_at).toISOString()
      })`,
    });
  }
  if (taken.took_over) log.info(`session ${sessionId}: took over a compaction lease (${taken.took_over})`);
  try {
    return await holdingLease(deps, pass, holder.nonce, summaryBlocked);
  } finally {
    try {
      await store.releaseLease({ sessionId, nonce: holder.nonce });
    } catch (error) {
      log.warn(
        `session ${sessionId}: could not release the compaction lease (it will expire): ${
          errorMessage(error)
        }`,
      );
    }
  }
}

async function holdingLease(
  deps: PassDeps,
  pass: Pass,
  nonce: string,
  summaryBlocked: GuardBlock | undefined,
): Promise<CompactionOutcome> {
  const { store, clock, settings } = deps;
  const { sessionId } = pass;
  const rows = await loadPlanRows(store, sessionId);
  const ratio = await deps.calibration.calibrate(sessionId, rows);
  const before = measure(rows, ratio);
  deps.events.emit(sessionId, {
    type: "compaction.start",
    reason: pass.reason,
    kind: KIND_OF[pass.mode],
    before_tokens: before,
  });
  const ctx: PlanContext = {
    sessionId,
    store,
    overheadTokens: Math.ceil((pass.overheadTokens ?? 0) * ratio),
    ...(summaryBlocked ? { summaryBlocked } : {}),
    rows,
    ratio,
    // After an overflow the configured window is wrong: the request that was too long bounds the real one.
    settings: pass.reason === "overflow" ? scaledTo(settings, before) : settings,
    reason: pass.reason,
    before,
    ...(pass.focus ? { focus: pass.focus } : {}),
    summarise: (replaced) => summarise(deps, pass, replaced, { nonce, ratio }),
  };
  const plan = pass.mode === "micro"
    ? await planMicro({ ...ctx, microLimit: settings.microLimit ?? settings.limit })
    : pass.mode === "prune"
    ? proactivePlan(ctx, settings.pruneMin ?? 0)
    : await planHard(ctx);
  const automatic = pass.reason !== "manual";
  switch (plan.type) {
    case "nothing":
      return await unchanged(deps, pass, {
        outcome: "nothing_to_do",
        tokens: before,
        note: plan.note,
        why: plan.why,
      });
    case "failed":
      if (!plan.leaseLost && automatic) {
        await updateGuard(store, sessionId, (state) => afterSummaryFailure(state, clock.now()));
      }
      return await unchanged(deps, pass, {
        outcome: "failed",
        tokens: before,
        note: plan.note,
        why: plan.leaseLost ? "lease_lost" : "summary_failed",
      });
    case "refused":
      // A micro pass's refusal is no strike against hard compaction: it only says one fold did not pay.
      if (pass.mode === "micro") {
        await updateGuard(store, sessionId, afterSummarySuccess);
      } else if (automatic) {
        await updateGuard(
          store,
          sessionId,
          (state) =>
            afterIneffective(afterSummarySuccess(state), {
              now: clock.now(),
              windowMs: settings.breakerWindowMs,
            }),
        );
      }
      return await unchanged(deps, pass, {
        outcome: "refused_growth",
        tokens: before,
        note: plan.note,
        why: "not_smaller",
        summaryTokens: plan.summaryTokens,
      });
    case "commit": {
      const followed = await withNotesFollowed(store, sessionId, rows, plan);
      return await commitPlan(deps, pass, { nonce, before, ratio, plan: followed });
    }
  }
}

/** Guard bookkeeping outside a commit (refusals and failures). */
async function updateGuard(
  store: CompactionStore & SessionStore,
  sessionId: string,
  change: (state: GuardState) => GuardState | null,
) {
  const next = change(await readGuard(store, sessionId));
  if (next) await writeGuard(store, sessionId, next);
}

async function summarise(
  deps: PassDeps,
  pass: Pass,
  replaced: readonly PlanRow[],
  facts: { nonce: string; ratio: number },
) {
  // Each summary call is recorded as soon as it answered (a kill later in the pass still counts it), billed
  // whether or not the summary was usable: the session's usage, cost and the job's spend count it.
  let recorded = Promise.resolve();
  const onUsage = (usage: Usage) => {
    recorded = recorded.then(() => recordSummaryUsage(deps, pass.sessionId, usage));
  };
  try {
    return await summariseCalls(deps, pass, replaced, { ...facts, onUsage });
  } finally {
    await recorded;
  }
}

/** Adds one summary call's tokens and cost to the session's totals (it is not a turn). */
async function recordSummaryUsage(deps: PassDeps, sessionId: string, usage: Usage): Promise<void> {
  const cost = deps.summaryPrice ? roundUsd(costOf(usage, deps.summaryPrice)) : null;
  try {
    await deps.store.addUsage(sessionId, {
      turns: 0,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      cached_tokens: usage.cached_tokens ?? 0,
      cache_write_tokens: usage.cache_write_tokens ?? 0,
      reasoning_tokens: usage.reasoning_tokens ?? 0,
      cost_usd: cost,
      provider: deps.provider.name,
      model: deps.settings.summaryModel,
    });
  } catch (error) {
    deps.log.warn(`could not record the summary call's usage: ${errorMessage(error)}`);
  }
}

function summariseCalls(
  deps: PassDeps,
  pass: Pass,
  replaced: readonly PlanRow[],
  facts: { nonce: string; ratio: number; onUsage: (usage: Usage) => void },
) {
  const { settings, log } = deps;
  const { nonce } = facts;
  return summariseMiddle(deps.store, {
    onUsage: facts.onUsage,
    middle: replaced,
    provider: deps.provider,
    model: settings.summaryModel,
    // Requests are sized in chars/4; where the provider counts more tokens per character (the calibration
    // ratio), the summary model's window holds fewer characters, and a request must still fit it.
    contextWindow: Math.floor(settings.summaryWindow / Math.max(1, facts.ratio)),
    smallerModel: settings.summaryWindow < settings.windowTokens,
    ...(pass.focus ? { focus: pass.focus } : {}),
    lease: { sessionId: pass.sessionId, nonce, ttlMs: settings.leaseTtlMs },
    clock: deps.clock,
    idleTimeoutMs: settings.idleTimeoutMs,
    totalTimeoutMs: settings.totalTimeoutMs,
    ...(pass.signal ? { signal: pass.signal } : {}),
    onLeaseError: (error) => log.warn(`could not refresh the compaction lease: ${errorMessage(error)}`),
  });
}
