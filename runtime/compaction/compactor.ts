/**
 * The Compactor (DESIGN §9): decides when to compact, takes the session's durable lease, plans a pass (hard:
 * hard.ts, micro: micro.ts, proactive pruning), and commits in one short transaction. The lease is held — and
 * refreshed — across a summary call, but no transaction is: appends go on meanwhile. Every pass, committed or
 * not, is logged (telemetry.ts); a committed one emits `compaction` and calls `post_compaction` once.
 */
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { CompactionConfig } from "../config/job_schema.ts";
import type { Logger } from "../core/log.ts";
import { currentProcess, type ProcessIdentity } from "../core/process_identity.ts";
import type { Provider } from "../providers/provider.ts";
import type { CompactionOutcome, CompactionReason, Compactor } from "../agent/seams.ts";
import type { CompactionKind, PassMeasures, Store } from "../store/store.ts";
import { fitToolResult } from "./cut.ts";
import { CALIBRATION_KEY, calibrationFrom, estimateFromInput, measure } from "./estimate.ts";
import {
  afterEffective,
  afterIneffective,
  afterSummaryFailure,
  afterSummarySuccess,
  GUARD_KEY,
  guardBlock,
  guardFrom,
  type GuardState,
  readGuard,
  writeGuard,
} from "./guard.ts";
import { planHard } from "./hard.ts";
import { planMicro } from "./micro.ts";
import { occupancyFor, storedRatio } from "./occupancy.ts";
import { layout, type Plan, type PlanContext, summaryTokensOf } from "./plan.ts";
import { planPrune } from "./prune.ts";
import { loadPlanRows, type PlanRow, withTokens } from "./rows.ts";
import { scaledTo, type Settings, settingsFrom } from "./settings.ts";
import { summariseMiddle } from "./summary_call.ts";
import { Telemetry } from "./telemetry.ts";

export interface CompactorOptions {
  store: Store;
  provider: Provider;
  /** The session's model; summaries use `summary_model` (option or config) when set. */
  model: string;
  summary_model?: string;
  /** The model's context window in tokens. */
  context_window: number;
  config: CompactionConfig;
  events: EventBus;
  hooks: Hooks;
  clock: Clock;
  /** The caller's logger: the compactor prefixes its own lines with `[compaction]`. */
  log: Logger;
  /** Who holds leases (default: this process); each acquisition gets a fresh nonce. */
  identity?: ProcessIdentity;
  /** Lease lifetime; refreshed every third of it while a summary runs. Default 60 s. */
  lease_ttl_ms?: number;
  /** Ceiling of one summary call. Default `config.summary_timeout`, else 300 s. */
  summary_timeout_ms?: number;
  /** A summary call without progress for this long is abandoned. Default 120 s. */
  summary_idle_timeout_ms?: number;
  /** How long two ineffective compactions in a row pause automatic compaction. Default 15 min. */
  breaker_window_ms?: number;
}

type Mode = "hard" | "micro" | "prune";

interface Pass {
  sessionId: string;
  reason: CompactionReason;
  mode: Mode;
  focus?: string;
  signal?: AbortSignal;
  /** performance.now() when the pass began (durations are logged, never compared in tests). */
  started: number;
}

const KIND_OF: Record<Mode, CompactionKind> = {
  hard: "summarize",
  micro: "micro_summarize",
  prune: "prune_tool_results",
};

export function createCompactor(options: CompactorOptions): Compactor {
  const { store, clock } = options;
  const log = options.log.child("compaction");
  const settings: Settings = settingsFrom(options);
  const identity = options.identity ?? currentProcess();
  const telemetry = new Telemetry({ store, events: options.events, log, settings, clock });
  /** Calibration ratios by session, as last read or measured by this process (advisory: a cache). */
  const ratios = new Map<string, number>();

  const ratioOf = async (sessionId: string): Promise<number> => {
    let ratio = ratios.get(sessionId);
    if (ratio === undefined) {
      ratio = await storedRatio(store, sessionId);
      ratios.set(sessionId, ratio);
    }
    return ratio;
  };

  /** The estimate of the next request, read cheaply (the newest reading and what was stored after it). */
  const estimate = async (sessionId: string) =>
    estimateFromInput(await store.estimateInput(sessionId), await ratioOf(sessionId));

  /** The calibration of this pass: the newest usable reading's ratio, else the last one known. */
  const calibrate = async (sessionId: string, rows: readonly PlanRow[]): Promise<number> => {
    const known = await ratioOf(sessionId);
    const measured = calibrationFrom(rows);
    if (measured === null || measured === known) return known;
    ratios.set(sessionId, measured);
    try {
      await store.setState(sessionId, CALIBRATION_KEY, { ratio: measured });
    } catch (error) {
      log.warn(`session ${sessionId}: could not store the token calibration: ${errorMessage(error)}`);
    }
    return measured;
  };

  const outcomeOf = (
    pass: Pass,
    tokens: number,
    result: Omit<CompactionOutcome, "before_tokens" | "after_tokens" | "messages_removed" | "occupancy">,
  ): CompactionOutcome => ({
    ...result,
    kind: result.kind ?? KIND_OF[pass.mode],
    before_tokens: tokens,
    after_tokens: tokens,
    messages_removed: 0,
    occupancy: telemetry.occupancy(tokens),
  });

  /** A pass that changed nothing: logged, reported (blocked or failed events), never thrown. */
  const unchanged = async (
    pass: Pass,
    facts: {
      outcome: Exclude<CompactionOutcome["outcome"], "committed">;
      tokens: number;
      note: string;
      why: string;
      kind?: CompactionKind;
      until?: number;
      summaryTokens?: number;
    },
  ): Promise<CompactionOutcome> => {
    const kind = facts.kind ?? KIND_OF[pass.mode];
    await telemetry.unchanged({
      sessionId: pass.sessionId,
      reason: pass.reason,
      kind,
      outcome: facts.outcome,
      tokens: facts.tokens,
      note: facts.note,
      why: facts.why,
      measures: measuresOf(pass, { absorbed: [], ratio: 1, summaryTokens: facts.summaryTokens ?? 0 }),
      ...(facts.until !== undefined ? { until: facts.until } : {}),
    });
    return outcomeOf(pass, facts.tokens, { changed: false, outcome: facts.outcome, kind, note: facts.note });
  };

  const measuresOf = (
    pass: Pass,
    facts: { absorbed: readonly PlanRow[]; ratio: number; summaryTokens: number },
  ): PassMeasures => ({
    thresholdTokens: settings.limit,
    windowTokens: settings.windowTokens,
    durationMs: Math.round(performance.now() - pass.started),
    absorbedMessages: facts.absorbed.length,
    absorbedTokens: measure(facts.absorbed, facts.ratio),
    summaryTokens: facts.summaryTokens,
  });

  /** Guard bookkeeping outside a commit (refusals and failures). */
  const updateGuard = async (sessionId: string, change: (state: GuardState) => GuardState | null) => {
    const next = change(await readGuard(store, sessionId));
    if (next) await writeGuard(store, sessionId, next);
  };

  const run = async (pass: Pass): Promise<CompactionOutcome> => {
    pass.signal?.throwIfAborted();
    const { sessionId } = pass;
    if (pass.reason !== "manual") {
      const block = guardBlock(await readGuard(store, sessionId), clock.now());
      if (block) {
        return await unchanged(pass, {
          outcome: block.reason,
          tokens: await estimate(sessionId),
          note: block.note,
          why: block.reason,
          until: block.until,
        });
      }
    }
    const holder: ProcessIdentity = { ...identity, nonce: crypto.randomUUID() };
    const taken = await store.acquireLease({
      sessionId,
      holder,
      now: clock.now(),
      ttlMs: settings.leaseTtlMs,
    });
    if (!taken.acquired) {
      const { holder: other, expires_at } = taken.current;
      return await unchanged(pass, {
        outcome: "nothing_to_do",
        tokens: await estimate(sessionId),
        why: "lease_held",
        note: `another compaction holds the lease (pid ${other.pid} on ${other.host}, until ${
          new Date(expires_at).toISOString()
        })`,
      });
    }
    if (taken.took_over) log.info(`session ${sessionId}: took over a compaction lease (${taken.took_over})`);
    try {
      return await holdingLease(pass, holder.nonce);
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
  };

  const holdingLease = async (pass: Pass, nonce: string): Promise<CompactionOutcome> => {
    const { sessionId } = pass;
    const rows = await loadPlanRows(store, sessionId);
    const ratio = await calibrate(sessionId, rows);
    const before = measure(rows, ratio);
    options.events.emit(sessionId, {
      type: "compaction.start",
      reason: pass.reason,
      kind: KIND_OF[pass.mode],
      before_tokens: before,
    });
    const ctx: PlanContext = {
      sessionId,
      rows,
      ratio,
      // After an overflow the configured window is wrong: the request that was too long bounds the real one.
      settings: pass.reason === "overflow" ? scaledTo(settings, before) : settings,
      reason: pass.reason,
      before,
      ...(pass.focus ? { focus: pass.focus } : {}),
      summarise: (replaced) => summarise(pass, replaced, nonce),
    };
    const plan = pass.mode === "micro"
      ? await planMicro({ ...ctx, microLimit: settings.microLimit ?? settings.limit })
      : pass.mode === "prune"
      ? proactivePlan(ctx)
      : await planHard(ctx);
    const automatic = pass.reason !== "manual";
    switch (plan.type) {
      case "nothing":
        return await unchanged(pass, {
          outcome: "nothing_to_do",
          tokens: before,
          note: plan.note,
          why: plan.why,
        });
      case "failed":
        if (!plan.leaseLost && automatic) {
          await updateGuard(sessionId, (state) => afterSummaryFailure(state, clock.now()));
        }
        return await unchanged(pass, {
          outcome: "failed",
          tokens: before,
          note: plan.note,
          why: plan.leaseLost ? "lease_lost" : "summary_failed",
        });
      case "refused":
        if (automatic) {
          await updateGuard(
            sessionId,
            (state) =>
              afterIneffective(afterSummarySuccess(state), {
                now: clock.now(),
                windowMs: settings.breakerWindowMs,
              }),
          );
        }
        return await unchanged(pass, {
          outcome: "refused_growth",
          tokens: before,
          note: plan.note,
          why: "not_smaller",
          summaryTokens: plan.summaryTokens,
        });
      case "commit":
        return await commit(pass, { nonce, before, ratio, plan });
    }
  };

  /** `proactive_prune`: old tool results of the middle, only when that frees at least `prune_min`. */
  const proactivePlan = (ctx: PlanContext): Plan => {
    const { middle } = layout(ctx);
    const prune = planPrune(middle, ctx.sessionId);
    const saved = Math.ceil(prune.savedTokens * ctx.ratio);
    if (prune.archive.length === 0 || saved < (settings.pruneMin ?? 0)) {
      return {
        type: "nothing",
        why: "below_prune_min",
        note: `pruning would free ${saved} tokens, less than compaction.prune_min (${settings.pruneMin})`,
      };
    }
    return {
      type: "commit",
      kind: "prune_tool_results",
      archive: prune.archive,
      insert: prune.insert,
      absorbed: ctx.rows.filter((r) => prune.archive.includes(r.id)),
      summaryTokens: summaryTokensOf(ctx.rows, ctx.ratio),
      detail: { saved_tokens: saved },
    };
  };

  const summarise = (pass: Pass, replaced: readonly PlanRow[], nonce: string) =>
    summariseMiddle(store, {
      middle: replaced,
      provider: options.provider,
      model: settings.summaryModel,
      contextWindow: settings.summaryWindow,
      ...(pass.focus ? { focus: pass.focus } : {}),
      lease: { sessionId: pass.sessionId, nonce, ttlMs: settings.leaseTtlMs },
      clock,
      idleTimeoutMs: settings.idleTimeoutMs,
      totalTimeoutMs: settings.totalTimeoutMs,
      ...(pass.signal ? { signal: pass.signal } : {}),
      onLeaseError: (error) => log.warn(`could not refresh the compaction lease: ${errorMessage(error)}`),
    });

  const commit = async (
    pass: Pass,
    facts: { nonce: string; before: number; ratio: number; plan: Extract<Plan, { type: "commit" }> },
  ): Promise<CompactionOutcome> => {
    const { sessionId } = pass;
    const { plan, before, ratio } = facts;
    const manual = pass.reason === "manual";
    // The guard changes in the commit's transaction, judged by the estimate of the committed transcript.
    const nextGuard = (state: GuardState, after: number): GuardState | null => {
      if (plan.kind === "micro_summarize") return afterSummarySuccess(state);
      if (pass.reason === "proactive_prune") return null;
      const summarised = plan.kind === "summarize" ? afterSummarySuccess(state) : state;
      if (after >= settings.limit) {
        return manual
          ? null
          : afterIneffective(summarised, { now: clock.now(), windowMs: settings.breakerWindowMs });
      }
      return afterEffective(summarised);
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
      detail: { ...plan.detail, holder_pid: identity.pid },
      measures: measuresOf(pass, { absorbed: plan.absorbed, ratio, summaryTokens: plan.summaryTokens }),
      estimate: (committed) => measure(withTokens(committed), ratio),
      state: { key: GUARD_KEY, update: (stored, after) => nextGuard(guardFrom(stored), after) ?? undefined },
    });
    if (!result.committed) {
      return await unchanged(pass, {
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
    try {
      await options.hooks.postCompaction({
        session_id: sessionId,
        old_session_id: "",
        kind: plan.kind,
        reason: pass.reason,
        before_tokens: before,
        after_tokens: result.afterTokens,
        messages_removed: outcome.messages_removed,
      });
    } catch (error) {
      log.warn(`post_compaction hook failed: ${errorMessage(error)}`);
    }
    return outcome;
  };

  const pass = (
    sessionId: string,
    reason: CompactionReason,
    mode: Mode,
    extra: { focus?: string; signal?: AbortSignal } = {},
  ): Pass => ({ sessionId, reason, mode, started: performance.now(), ...extra });

  /** Between turns: proactive pruning (when it frees enough), then micro-compaction (above its threshold). */
  const afterTurn = async (sessionId: string, signal?: AbortSignal): Promise<CompactionOutcome | null> => {
    let outcome: CompactionOutcome | null = null;
    if (settings.pruneMin !== null) {
      const tokens = await estimate(sessionId);
      if (tokens < settings.limit && await pruneWorthIt(sessionId)) {
        outcome = await run(pass(sessionId, "proactive_prune", "prune", signalOf(signal)));
      }
    }
    if (settings.microLimit !== null && await estimate(sessionId) >= settings.microLimit) {
      outcome = await run(pass(sessionId, "between_turns", "micro", signalOf(signal)));
    }
    return outcome;
  };

  /** Whether pruning the middle now frees at least `prune_min` (checked before taking the lease). */
  const pruneWorthIt = async (sessionId: string): Promise<boolean> => {
    const rows = await loadPlanRows(store, sessionId);
    const ratio = await ratioOf(sessionId);
    const { middle } = layout({ rows, ratio, settings, reason: "proactive_prune" });
    return Math.ceil(planPrune(middle, sessionId).savedTokens * ratio) >= (settings.pruneMin ?? Infinity);
  };

  return {
    async beforeModelCall(sessionId, callOptions) {
      if (!settings.enabled) return null;
      // Before every model call: reads the newest reading and what came after it, not every active row.
      if (await estimate(sessionId) < settings.limit) return null;
      const reason = callOptions.afterTools ? "post_tool" : "pre_api";
      return await run(pass(sessionId, reason, "hard", signalOf(callOptions.signal)));
    },
    async recoverOverflow(sessionId, callOptions) {
      if (!settings.enabled) {
        log.info(`session ${sessionId}: context overflow, but compaction is disabled`);
        return false;
      }
      return (await run(pass(sessionId, "overflow", "hard", signalOf(callOptions.signal)))).changed;
    },
    compact(sessionId, callOptions) {
      const focus = callOptions.focus?.trim();
      return run(
        pass(sessionId, "manual", "hard", { ...(focus ? { focus } : {}), ...signalOf(callOptions.signal) }),
      );
    },
    async afterTurn(sessionId, callOptions) {
      if (!settings.enabled) return null;
      try {
        return await afterTurn(sessionId, callOptions.signal);
      } catch (error) {
        if (callOptions.signal?.aborted) throw error;
        log.warn(`session ${sessionId}: compaction between turns failed: ${errorMessage(error)}`);
        return null;
      }
    },
    fitToolResult(sessionId, message) {
      if (!settings.enabled) return [message];
      return fitToolResult(message, { maxTokens: settings.maxToolResult, sessionId });
    },
    async occupancy(sessionId) {
      return occupancyFor(await estimate(sessionId), {
        threshold: settings.limit,
        window: settings.windowTokens,
      });
    },
  };
}

function signalOf(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal ? { signal } : {};
}
