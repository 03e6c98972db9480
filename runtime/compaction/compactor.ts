/**
 * The Compactor (docs/compaction.md): decides when to compact, takes the session's durable lease, plans a pass (hard:
 * hard.ts, micro: micro.ts, proactive pruning), and commits in one short transaction. The lease is held — and
 * refreshed — across a summary call, but no transaction is: appends go on meanwhile. Every pass, committed or
 * not, is logged (telemetry.ts); a committed one emits `compaction` and calls `post_compaction` once.
 */
import { listedPrice, type Price } from "../providers/pricing.ts";
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { CompactionConfig } from "../config/job_schema.ts";
import type { Logger } from "../core/log.ts";
import { currentProcess, type ProcessIdentity } from "../core/process_identity.ts";
import type { Provider } from "../providers/provider.ts";
import type { CompactionOutcome, CompactionReason, Compactor } from "../agent/seams.ts";
import type { CompactionStore, SessionStore } from "../store/store.ts";
import { Calibration } from "./calibration.ts";
import { measure } from "./estimate.ts";
import { loadPlanRows } from "./rows.ts";
import { occupancyFor } from "./occupancy.ts";
import type { Mode, PassDeps } from "./pass_outcome.ts";
import type { StoredMessage } from "../core/types.ts";
import { settingsFrom } from "./settings.ts";
import { smallestRequestTokens } from "./summary.ts";

export interface CompactorOptions {
  store: CompactionStore & SessionStore;
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
  /** Requests over which a micro fold must pay for itself (default 8; Infinity: every fold pays). */
  micro_payback_requests?: number;
  /** The session model's price (`model.pricing` or the table's): summary calls on it are billed at it. */
  price?: Price | null;
  /** A session this process just created: no pass has stored its calibration, so it starts at 1 unread. */
  created?: string;
}

// The passes (the ladder, summaries, commits, their telemetry, the floor, the fallback view: most of this
// folder) are imported when one runs, and the cut of a large tool result with the first tool result: before
// a session's first request the compactor only estimates, and a short session never compacts.
async function runPass(
  deps: () => Promise<PassDeps>,
  sessionId: string,
  reason: CompactionReason,
  mode: Mode,
  extra: { focus?: string; signal?: AbortSignal | undefined; overheadTokens?: number },
): Promise<CompactionOutcome> {
  const [{ runPass: run }, { newPass }, passDeps] = await Promise.all([
    import("./pass.ts"),
    import("./pass_outcome.ts"),
    deps(),
  ]);
  return await run(passDeps, newPass(sessionId, reason, mode, extra));
}

async function fallbackView(
  ...args: Parameters<typeof import("./fallback_view.ts").fallbackView>
): Promise<StoredMessage[] | null> {
  return await (await import("./fallback_view.ts")).fallbackView(...args);
}

async function pruneWorthIt(
  ...args: Parameters<typeof import("./proactive.ts").pruneWorthIt>
): Promise<boolean> {
  return await (await import("./proactive.ts")).pruneWorthIt(...args);
}

export function createCompactor(options: CompactorOptions): Compactor {
  const { store, clock } = options;
  const log = options.log.child("compaction");
  const settings = settingsFrom(options);
  const calibration = new Calibration(store, log, options.created);
  const identity = options.identity ?? currentProcess();
  let passDeps: Promise<PassDeps> | undefined;
  const deps = () =>
    passDeps ??= import("./telemetry.ts").then(({ Telemetry }) => ({
      store,
      provider: options.provider,
      clock,
      log,
      events: options.events,
      hooks: options.hooks,
      settings,
      identity,
      telemetry: new Telemetry({ store, events: options.events, log, settings, clock }),
      calibration,
      summaryPrice: settings.summaryModel === options.model
        ? options.price ?? listedPrice(options.model)
        : listedPrice(settings.summaryModel),
    }));
  const smallest = smallestRequestTokens(settings.summaryWindow);
  if (settings.enabled && smallest > settings.summaryWindow) {
    log.warn(
      `the summary model's window (${settings.summaryWindow} tokens, compaction.summary_context_window) cannot ` +
        `take even one summary request (about ${smallest} tokens): summaries will fail; raise it or choose ` +
        `a larger summary_model`,
    );
  }

  /** Whether the next request fits the window: the transcript's estimate plus what every request carries. */
  const fitsWindow = async (sessionId: string, overheadTokens: number) => {
    const { irreducibleTokens } = await import("./floor.ts");
    const rows = await loadPlanRows(store, sessionId);
    const ratio = await calibration.ratioOf(sessionId);
    const tokens = measure(rows, ratio) + Math.ceil(overheadTokens * ratio);
    return {
      fits: tokens <= settings.windowTokens,
      tokens,
      irreducible: irreducibleTokens(rows, ratio, overheadTokens),
    };
  };

  /**
   * When another process holds the lease: the next request's rows with the ladder applied in memory (nothing
   * written), or null when the lease is free or the ladder has nothing to change.
   */
  const viewWhileLeaseHeld = async (
    sessionId: string,
    options: { overheadTokens: number; reason: CompactionReason },
    why: string,
  ) => {
    const lease = await store.readLease(sessionId);
    if (!lease || lease.expires_at <= clock.now()) return null;
    const holder = `another compaction holds the lease (pid ${lease.holder.pid} on ${lease.holder.host})`;
    const view = await fallbackView(await deps(), sessionId, { ...options, holder });
    if (view) {
      log.warn(
        `session ${sessionId}: ${why}, and ${holder}: this request is built from an uncommitted fallback ` +
          `of the transcript`,
      );
    }
    return view;
  };

  /** Between turns: proactive pruning (when it frees enough), then micro-compaction (above its threshold). */
  const betweenTurns = async (sessionId: string, signal?: AbortSignal): Promise<CompactionOutcome | null> => {
    let outcome: CompactionOutcome | null = null;
    if (settings.pruneMin !== null && await calibration.estimate(sessionId) < settings.limit) {
      const ratio = await calibration.ratioOf(sessionId);
      if (await pruneWorthIt(store, sessionId, { settings, ratio })) {
        outcome = await runPass(deps, sessionId, "proactive_prune", "prune", { signal });
      }
    }
    if (settings.microLimit !== null && await calibration.estimate(sessionId) >= settings.microLimit) {
      outcome = await runPass(deps, sessionId, "between_turns", "micro", { signal });
    }
    return outcome;
  };

  return {
    async beforeModelCall(sessionId, callOptions) {
      if (!settings.enabled) return null;
      // Before every model call: reads the newest reading and what came after it, not every active row.
      if (await calibration.estimate(sessionId) < settings.limit) return null;
      const reason = callOptions.afterTools ? "post_tool" : "pre_api";
      const overheadTokens = callOptions.overheadTokens ?? 0;
      const outcome = await runPass(deps, sessionId, reason, "hard", {
        signal: callOptions.signal,
        overheadTokens,
      });
      // The floor: no request over the window goes out. The ladder gets there unless the irreducible part
      // alone is too big (then the run fails, naming the sizes) or another process holds the lease (then this
      // request is built from the ladder applied in memory).
      const fit = await fitsWindow(sessionId, overheadTokens);
      if (fit.fits) return outcome;
      if (fit.irreducible.total > settings.windowTokens) {
        const { ContextTooLargeError } = await import("./floor.ts");
        throw new ContextTooLargeError(fit.irreducible, settings.windowTokens, fit.tokens);
      }
      const view = await viewWhileLeaseHeld(
        sessionId,
        { overheadTokens, reason },
        `the next request is about ${fit.tokens} tokens, over the ${settings.windowTokens}-token window`,
      );
      if (view) return { ...outcome, view };
      log.warn(
        `session ${sessionId}: the next request is about ${fit.tokens} tokens, over the ` +
          `${settings.windowTokens}-token window, and compaction could not run now (${outcome?.note ?? ""})`,
      );
      return outcome;
    },
    async recoverOverflow(sessionId, callOptions) {
      if (!settings.enabled) {
        log.info(`session ${sessionId}: context overflow, but compaction is disabled`);
        return { shrank: false };
      }
      const overheadTokens = callOptions.overheadTokens ?? 0;
      const outcome = await runPass(deps, sessionId, "overflow", "hard", {
        signal: callOptions.signal,
        overheadTokens,
      });
      if (outcome.changed) return { shrank: true };
      const view = await viewWhileLeaseHeld(
        sessionId,
        { overheadTokens, reason: "overflow" },
        "the provider rejected the request as too long",
      );
      return view ? { shrank: true, view } : { shrank: false };
    },
    compact(sessionId, callOptions) {
      const focus = callOptions.focus?.trim();
      return runPass(deps, sessionId, "manual", "hard", {
        ...(focus ? { focus } : {}),
        signal: callOptions.signal,
      });
    },
    async afterTurn(sessionId, callOptions) {
      if (!settings.enabled) return null;
      try {
        return await betweenTurns(sessionId, callOptions.signal);
      } catch (error) {
        if (callOptions.signal?.aborted) throw error;
        log.warn(`session ${sessionId}: compaction between turns failed: ${errorMessage(error)}`);
        return null;
      }
    },
    useWindow(tokens) {
      const previous = settings.windowTokens;
      if (!(tokens > 0) || tokens >= previous) return null;
      // One settings object is shared by every part of the compactor: replace its values in place.
      Object.assign(settings, settingsFrom({ ...options, context_window: tokens }));
      return previous;
    },
    async fitToolResult(sessionId, message) {
      if (!settings.enabled) return [message];
      const { fitToolResult } = await import("./cut.ts");
      return fitToolResult(message, { maxTokens: settings.maxToolResult, sessionId });
    },
    async occupancy(sessionId) {
      return occupancyFor(await calibration.estimate(sessionId), {
        threshold: settings.limit,
        window: settings.windowTokens,
      });
    },
  };
}
