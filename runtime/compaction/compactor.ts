/**
 * The Compactor (DESIGN §9): decides when to compact, takes the session's durable lease, prunes old tool
 * results or summarises the middle of the transcript with the model, and commits in one short transaction.
 * The lease is held — and refreshed — across the summary call, but no transaction is: appends go on meanwhile.
 */
import type { Clock } from "../core/clock.ts";
import { parseDuration } from "../core/duration.ts";
import { errorMessage } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { CompactionConfig } from "../config/job_schema.ts";
import type { Logger } from "../core/log.ts";
import { currentProcess, type ProcessIdentity } from "../core/process_identity.ts";
import type { Provider } from "../providers/provider.ts";
import type { CompactionOutcome, CompactionReason, Compactor } from "../agent/seams.ts";
import type { CommitRequest, Store } from "../store/store.ts";
import { selectBoundaries } from "./boundaries.ts";
import { approxTokens, estimateFromInput, estimateTokens } from "./estimate.ts";
import {
  afterEffective,
  afterIneffective,
  afterSummaryFailure,
  afterSummarySuccess,
  BREAKER_WINDOW_MS,
  GUARD_KEY,
  guardBlock,
  guardFrom,
  type GuardState,
  readGuard,
  writeGuard,
} from "./guard.ts";
import { planPrune } from "./prune.ts";
import { loadPlanRows, type PlanRow, withTokens } from "./rows.ts";
import { summaryContent } from "./summary.ts";
import { summariseMiddle } from "./summary_call.ts";

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

interface Settings {
  enabled: boolean;
  limit: number;
  protect_first: number;
  protect_last: number;
  prune: boolean;
  summaryModel: string;
  leaseTtlMs: number;
  totalTimeoutMs: number;
  idleTimeoutMs: number;
  breakerWindowMs: number;
}

interface Attempt {
  sessionId: string;
  reason: CompactionReason;
  focus?: string;
  signal?: AbortSignal;
}

export function createCompactor(options: CompactorOptions): Compactor {
  const { store, clock, config } = options;
  const log = options.log.child("compaction");
  const summaryTimeout = config.summary_timeout;
  const settings: Settings = {
    enabled: config.enabled ?? true,
    limit: (config.threshold ?? 0.75) * options.context_window,
    protect_first: config.protect_first ?? 3,
    protect_last: config.protect_last ?? 20,
    prune: config.prune_tool_results ?? true,
    summaryModel: options.summary_model ?? config.summary_model ?? options.model,
    leaseTtlMs: options.lease_ttl_ms ?? 60_000,
    totalTimeoutMs: options.summary_timeout_ms ??
      (summaryTimeout === undefined ? 300_000 : parseDuration(summaryTimeout)),
    idleTimeoutMs: options.summary_idle_timeout_ms ?? 120_000,
    breakerWindowMs: options.breaker_window_ms ?? BREAKER_WINDOW_MS,
  };
  const identity = options.identity ?? currentProcess();

  const unchanged = (attempt: Attempt, tokens: number, note: string): CompactionOutcome => {
    log.info(`session ${attempt.sessionId}: ${attempt.reason} compaction did nothing: ${note}`);
    return { changed: false, before_tokens: tokens, after_tokens: tokens, messages_removed: 0, note };
  };

  const failed = (attempt: Attempt, tokens: number, reason: string): CompactionOutcome => {
    log.warn(`session ${attempt.sessionId}: ${attempt.reason} compaction failed: ${reason}`);
    options.events.emit(attempt.sessionId, {
      type: "compaction.failed",
      reason: attempt.reason,
      error: reason,
    });
    return { changed: false, before_tokens: tokens, after_tokens: tokens, messages_removed: 0, note: reason };
  };

  /** Guard bookkeeping: automatic attempts record everything; forced ones only clear guards on success. */
  const updateGuard = async (attempt: Attempt, change: (state: GuardState) => GuardState | null) => {
    const next = change(await readGuard(store, attempt.sessionId));
    if (next) await writeGuard(store, attempt.sessionId, next);
  };

  /** The estimate of the next request, read cheaply (the newest reading and what was stored after it). */
  const estimate = async (sessionId: string) => estimateFromInput(await store.estimateInput(sessionId));

  const run = async (attempt: Attempt): Promise<CompactionOutcome> => {
    attempt.signal?.throwIfAborted();
    const { sessionId } = attempt;
    if (attempt.reason === "threshold") {
      const block = guardBlock(await readGuard(store, sessionId), clock.now());
      if (block) return unchanged(attempt, await estimate(sessionId), block);
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
      return unchanged(
        attempt,
        await estimate(sessionId),
        `another compaction holds the lease (pid ${other.pid} on ${other.host}, until ${
          new Date(expires_at).toISOString()
        })`,
      );
    }
    if (taken.took_over) log.info(`session ${sessionId}: took over a compaction lease (${taken.took_over})`);
    try {
      return await compactHoldingLease(attempt, holder.nonce);
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

  const compactHoldingLease = async (attempt: Attempt, nonce: string): Promise<CompactionOutcome> => {
    const { sessionId } = attempt;
    const active = await loadPlanRows(store, sessionId);
    const before = estimateTokens(active);
    const { head, tail } = selectBoundaries(active, settings);
    if (head >= tail) {
      return unchanged(
        attempt,
        before,
        "nothing to compact: every message is protected (head, tail or tool call)",
      );
    }
    const middle = active.slice(head, tail);
    if (middle.every((m) => m.kind === "summary")) {
      return unchanged(attempt, before, "nothing to compact: nothing new since the last summary");
    }
    const watermark = active.reduce((max, m) => Math.max(max, m.seq), 0);
    const detail = { watermark, head, tail: active.length - tail, holder_pid: identity.pid };

    if (attempt.reason !== "manual" && settings.prune) {
      const prune = planPrune(middle);
      // Judged as the next estimate will see it: after a compaction the old reading is stale, so chars/4.
      if (prune.archive.length > 0 && sumTokens(active) - prune.savedTokens < settings.limit) {
        return commit(attempt, before, {
          sessionId,
          nonce,
          now: clock.now(),
          kind: "prune_tool_results",
          reason: attempt.reason,
          archive: prune.archive,
          insert: prune.insert,
          beforeTokens: before,
          detail,
        });
      }
    }

    const summary = await summarise(attempt, middle, nonce);
    if (!summary.ok) {
      if (!summary.leaseLost && attempt.reason !== "manual") {
        await updateGuard(attempt, (state) => afterSummaryFailure(state, clock.now()));
      }
      return failed(attempt, before, summary.error);
    }
    const content = summaryContent(summary.text, middle.length);
    const replacedTokens = sumTokens(middle);
    const summaryTokens = approxTokens({ content });
    if (summaryTokens >= replacedTokens) {
      if (attempt.reason !== "manual") {
        await updateGuard(
          attempt,
          (state) =>
            afterIneffective(afterSummarySuccess(state), {
              now: clock.now(),
              windowMs: settings.breakerWindowMs,
            }),
        );
      }
      return unchanged(
        attempt,
        before,
        `refused: the summary (${summaryTokens} tokens) is not smaller than the ${middle.length} messages it would replace (${replacedTokens} tokens)`,
      );
    }
    return commit(attempt, before, {
      sessionId,
      nonce,
      now: clock.now(),
      kind: "summarize",
      reason: attempt.reason,
      archive: middle.map((m) => m.id),
      insert: [{ role: "user", content, kind: "summary", pos: middle[0]!.pos }],
      beforeTokens: before,
      detail: {
        ...detail,
        summary_model: settings.summaryModel,
        ...(attempt.focus ? { focus: attempt.focus } : {}),
      },
    });
  };

  const summarise = (attempt: Attempt, middle: readonly PlanRow[], nonce: string) =>
    summariseMiddle(store, {
      middle,
      provider: options.provider,
      model: settings.summaryModel,
      contextWindow: options.context_window,
      ...(attempt.focus ? { focus: attempt.focus } : {}),
      lease: { sessionId: attempt.sessionId, nonce, ttlMs: settings.leaseTtlMs },
      clock,
      idleTimeoutMs: settings.idleTimeoutMs,
      totalTimeoutMs: settings.totalTimeoutMs,
      ...(attempt.signal ? { signal: attempt.signal } : {}),
      onLeaseError: (error) => log.warn(`could not refresh the compaction lease: ${errorMessage(error)}`),
    });

  const commit = async (
    attempt: Attempt,
    before: number,
    request: Omit<CommitRequest, "estimate" | "state">,
  ): Promise<CompactionOutcome> => {
    const manual = attempt.reason === "manual";
    // The guard changes in the commit's transaction, judged by the estimate of the committed transcript.
    const nextGuard = (state: GuardState, after: number): GuardState | null => {
      const summarised = request.kind === "summarize" ? afterSummarySuccess(state) : state;
      if (after >= settings.limit) {
        return manual
          ? null
          : afterIneffective(summarised, { now: request.now, windowMs: settings.breakerWindowMs });
      }
      return afterEffective(summarised);
    };
    const result = await store.commitCompaction({
      ...request,
      estimate: (rows) => estimateTokens(withTokens(rows)),
      state: { key: GUARD_KEY, update: (stored, after) => nextGuard(guardFrom(stored), after) ?? undefined },
    });
    if (!result.committed) return failed(attempt, before, `nothing written: ${result.reason}`);
    const outcome: CompactionOutcome = {
      changed: true,
      kind: request.kind,
      before_tokens: before,
      after_tokens: result.afterTokens,
      messages_removed: request.archive.length,
    };
    log.info(
      `session ${attempt.sessionId}: ${request.kind} (${attempt.reason}) ${before} → ${result.afterTokens} tokens, ` +
        `${request.archive.length} messages archived`,
    );
    options.events.emit(attempt.sessionId, {
      type: "compaction",
      kind: request.kind,
      reason: attempt.reason,
      before_tokens: before,
      after_tokens: result.afterTokens,
      messages_removed: request.archive.length,
      compaction_id: result.compactionId,
    });
    try {
      await options.hooks.postCompaction({
        session_id: attempt.sessionId,
        old_session_id: attempt.sessionId,
        kind: request.kind,
        reason: attempt.reason,
        before_tokens: before,
        after_tokens: result.afterTokens,
        messages_removed: request.archive.length,
      });
    } catch (error) {
      log.warn(`post_compaction hook failed: ${errorMessage(error)}`);
    }
    return outcome;
  };

  return {
    async beforeModelCall(sessionId, callOptions) {
      if (!settings.enabled) return null;
      // Before every model call: reads the newest reading and what came after it, not every active row.
      if (await estimate(sessionId) < settings.limit) return null;
      return await run({ sessionId, reason: "threshold", ...signalOf(callOptions) });
    },
    async recoverOverflow(sessionId, callOptions) {
      if (!settings.enabled) {
        log.info(`session ${sessionId}: context overflow, but compaction is disabled`);
        return false;
      }
      return (await run({ sessionId, reason: "overflow", ...signalOf(callOptions) })).changed;
    },
    compact(sessionId, callOptions) {
      const focus = callOptions.focus?.trim();
      return run({ sessionId, reason: "manual", ...(focus ? { focus } : {}), ...signalOf(callOptions) });
    },
  };
}

function sumTokens(rows: readonly PlanRow[]): number {
  let total = 0;
  for (const r of rows) total += r.tokens;
  return total;
}

function signalOf(options: { signal?: AbortSignal }): { signal?: AbortSignal } {
  return options.signal ? { signal: options.signal } : {};
}
