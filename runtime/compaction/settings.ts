/**
 * Compaction settings in tokens, from the job's `compaction:` keys and the model's window, with the defaults
 * (docs/compaction.md): a hard threshold that leaves room for the reply (`autoThreshold`: 0.75 of the window up to
 * 32k, up to 0.9 of larger ones), compacting down to half of the window; head 3 messages; tail up
 * to 20 messages within 12 % of the window (a small tail makes each rewrite cheap to re-cache); a single tool
 * result above 15 % of the window is cut when it is stored;
 * micro-compaction off, at half the window when on; no proactive pruning unless `prune_min` is set.
 */
import { parseDuration } from "../core/duration.ts";
import type { CompactionConfig } from "../config/job_schema.ts";
import { CALL_DEFAULTS } from "../providers/model.ts";

/** How long two ineffective compactions in a row pause automatic compaction (the breaker: guard.ts). */
export const BREAKER_WINDOW_MS = 15 * 60_000;

export const DEFAULTS = {
  /** The automatic threshold's bounds, as shares of the window. */
  threshold_min: 0.75,
  threshold_max: 0.9,
  /** Tokens kept free for the reply when `model.max_output_tokens` does not say. */
  reply_reserve: 8192,
  protect_first: 3,
  protect_last: 20,
  tail_budget: 0.12,
  max_tool_result: 0.15,
  micro_threshold: 0.5,
  low_water: 0.5,
  /** About the distance between two passes, in requests. */
  micro_payback_requests: 8,
  /** Share of the window the fallback's marker may take. */
  marker_share: 0.08,
} as const;

export interface Settings {
  enabled: boolean;
  windowTokens: number;
  /** threshold and tail_budget as shares of the window, for `scaledTo`. */
  thresholdShare: number;
  /** Tokens the automatic threshold keeps free for the reply (null: `compaction.threshold` is set). */
  replyReserve: number | null;
  tailShare: number;
  /** The hard threshold in tokens; occupancy is measured against it. */
  limit: number;
  /** An automatic hard pass brings the transcript down to this many tokens when it can. */
  lowWater: number;
  lowWaterShare: number;
  /** Characters the fallback's marker may take. */
  markerChars: number;
  protect_first: number;
  protect_last: number;
  tailBudget: number;
  /** Tool results above this many chars/4 tokens are cut at insertion. */
  maxToolResult: number;
  prune: boolean;
  /** Proactive pruning between turns frees at least this many tokens, or does not commit (null: off). */
  pruneMin: number | null;
  /** Micro-compaction runs between turns above this many tokens (null: off). */
  microLimit: number | null;
  /** Requests over which a micro fold must pay for its summary call and the cache it breaks. */
  microPayback: number;
  summaryModel: string;
  summaryWindow: number;
  leaseTtlMs: number;
  totalTimeoutMs: number;
  idleTimeoutMs: number;
  breakerWindowMs: number;
}

export interface SettingsInput {
  config: CompactionConfig;
  model: string;
  summary_model?: string;
  context_window: number;
  /** `model.max_output_tokens`: what the automatic threshold keeps free for the reply. */
  max_output_tokens?: number;
  lease_ttl_ms?: number;
  summary_timeout_ms?: number;
  summary_idle_timeout_ms?: number;
  breaker_window_ms?: number;
  micro_payback_requests?: number;
}

export function settingsFrom(input: SettingsInput): Settings {
  const { config } = input;
  const window = input.context_window;
  const micro = config.micro;
  const replyReserve = config.threshold === undefined
    ? input.max_output_tokens ?? DEFAULTS.reply_reserve
    : null;
  const thresholdShare = config.threshold ?? autoThreshold(window, replyReserve!);
  const tailShare = config.tail_budget ?? DEFAULTS.tail_budget;
  const lowWaterShare = Math.min(config.low_water ?? DEFAULTS.low_water, thresholdShare);
  return {
    lowWater: Math.floor(lowWaterShare * window),
    lowWaterShare,
    markerChars: Math.max(800, Math.floor(DEFAULTS.marker_share * window * 4)),
    enabled: config.enabled ?? true,
    windowTokens: window,
    thresholdShare,
    replyReserve,
    tailShare,
    limit: Math.floor(thresholdShare * window),
    protect_first: config.protect_first ?? DEFAULTS.protect_first,
    protect_last: config.protect_last ?? DEFAULTS.protect_last,
    tailBudget: Math.floor(tailShare * window),
    maxToolResult: Math.floor((config.max_tool_result ?? DEFAULTS.max_tool_result) * window),
    prune: config.prune_tool_results ?? true,
    pruneMin: config.prune_min ?? null,
    microLimit: micro?.enabled ? Math.floor((micro.threshold ?? DEFAULTS.micro_threshold) * window) : null,
    microPayback: input.micro_payback_requests ?? micro?.payback ?? DEFAULTS.micro_payback_requests,
    summaryModel: input.summary_model ?? config.summary_model ?? input.model,
    summaryWindow: config.summary_context_window ?? window,
    leaseTtlMs: input.lease_ttl_ms ?? 60_000,
    totalTimeoutMs: input.summary_timeout_ms ??
      (config.summary_timeout === undefined ? 300_000 : parseDuration(config.summary_timeout)),
    idleTimeoutMs: input.summary_idle_timeout_ms ?? CALL_DEFAULTS.idleTimeoutMs,
    breakerWindowMs: input.breaker_window_ms ?? BREAKER_WINDOW_MS,
  };
}

/**
 * The default hard threshold: what the window holds once `reserve` tokens are kept free for the reply, as a
 * share between 0.75 and 0.9. A fixed share wastes a large window (a quarter of 128k is four times any
 * reply), and every token a compaction pass drops early is a token of context the model loses and a pass that
 * comes sooner; the peers compact near 90 % of a large window for the same reason. At 32k and below it is
 * 0.75, as it always was.
 */
export function autoThreshold(window: number, reserve: number): number {
  const free = window > 0 ? 1 - reserve / window : 0;
  return Math.min(DEFAULTS.threshold_max, Math.max(DEFAULTS.threshold_min, free));
}

/**
 * The settings of a pass whose real window is smaller than configured — the provider rejected a request of
 * `window` tokens as too long: threshold and tail budget are taken as shares of that instead.
 */
export function scaledTo(settings: Settings, window: number): Settings {
  if (window >= settings.windowTokens) return settings;
  const share = settings.replyReserve === null
    ? settings.thresholdShare
    : autoThreshold(window, settings.replyReserve);
  return {
    ...settings,
    limit: Math.floor(share * window),
    lowWater: Math.floor(settings.lowWaterShare * window),
    tailBudget: Math.floor(settings.tailShare * window),
    markerChars: Math.max(800, Math.floor(DEFAULTS.marker_share * window * 4)),
  };
}
