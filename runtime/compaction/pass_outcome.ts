/**
 * What a compaction pass is and what it works with, and how a pass that changed nothing ends: one log row,
 * the blocked or failed events (telemetry.ts), and an outcome for the caller — never an exception.
 */
import type { Price } from "../providers/pricing.ts";
import type { Clock } from "../core/clock.ts";
import type { EventBus } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { Logger } from "../core/log.ts";
import type { ProcessIdentity } from "../core/process_identity.ts";
import type { Provider } from "../providers/provider.ts";
import type { CompactionOutcome, CompactionReason } from "../agent/seams.ts";
import type { CompactionKind, CompactionStore, PassMeasures, SessionStore } from "../store/store.ts";
import type { Calibration } from "./calibration.ts";
import { measure } from "./estimate.ts";
import type { PlanRow } from "./rows.ts";
import type { Settings } from "./settings.ts";
import type { Telemetry } from "./telemetry.ts";

export type Mode = "hard" | "micro" | "prune";

export interface Pass {
  sessionId: string;
  reason: CompactionReason;
  mode: Mode;
  focus?: string;
  signal?: AbortSignal;
  /** chars/4 tokens every request carries besides the rows (the tool definitions). */
  overheadTokens?: number;
  /** performance.now() when the pass began (durations are logged, never compared in tests). */
  started: number;
}

/** What every pass works with: one compactor's parts. */
export interface PassDeps {
  store: CompactionStore & SessionStore;
  provider: Provider;
  clock: Clock;
  log: Logger;
  events: EventBus;
  hooks: Hooks;
  settings: Settings;
  identity: ProcessIdentity;
  telemetry: Telemetry;
  calibration: Calibration;
  /** USD per million tokens of the summary model; null when no price is known (its calls cost nothing then). */
  summaryPrice: Price | null;
}

export const KIND_OF: Record<Mode, CompactionKind> = {
  hard: "summarize",
  micro: "micro_summarize",
  prune: "prune_tool_results",
};

export function newPass(
  sessionId: string,
  reason: CompactionReason,
  mode: Mode,
  extra: { focus?: string; signal?: AbortSignal | undefined; overheadTokens?: number } = {},
): Pass {
  const { signal, ...rest } = extra;
  return { sessionId, reason, mode, started: performance.now(), ...rest, ...(signal ? { signal } : {}) };
}

export function measuresOf(
  deps: PassDeps,
  pass: Pass,
  facts: { absorbed: readonly PlanRow[]; ratio: number; summaryTokens: number },
): PassMeasures {
  return {
    thresholdTokens: deps.settings.limit,
    windowTokens: deps.settings.windowTokens,
    durationMs: Math.round(performance.now() - pass.started),
    absorbedMessages: facts.absorbed.length,
    absorbedTokens: measure(facts.absorbed, facts.ratio),
    summaryTokens: facts.summaryTokens,
  };
}

export interface Unchanged {
  outcome: Exclude<CompactionOutcome["outcome"], "committed">;
  tokens: number;
  note: string;
  /** A content-free code for the log row. */
  why: string;
  kind?: CompactionKind;
  until?: number;
  summaryTokens?: number;
}

/** A pass that changed nothing: logged, reported (blocked or failed events), never thrown. */
export async function unchanged(deps: PassDeps, pass: Pass, facts: Unchanged): Promise<CompactionOutcome> {
  const kind = facts.kind ?? KIND_OF[pass.mode];
  await deps.telemetry.unchanged({
    sessionId: pass.sessionId,
    reason: pass.reason,
    kind,
    outcome: facts.outcome,
    tokens: facts.tokens,
    note: facts.note,
    why: facts.why,
    measures: measuresOf(deps, pass, { absorbed: [], ratio: 1, summaryTokens: facts.summaryTokens ?? 0 }),
    ...(facts.until !== undefined ? { until: facts.until } : {}),
  });
  return {
    changed: false,
    outcome: facts.outcome,
    kind,
    before_tokens: facts.tokens,
    after_tokens: facts.tokens,
    messages_removed: 0,
    occupancy: deps.telemetry.occupancy(facts.tokens),
    note: facts.note,
  };
}
