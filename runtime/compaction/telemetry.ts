/**
 * What a compaction pass tells the world (docs/compaction.md): one content-free compaction-log row per pass, the
 * `compaction` event (committed, with occupancy), `compaction.blocked` (breaker, cooldown, refused growth),
 * `compaction.failed`, and one log line. Telemetry never blocks a turn: a log row that cannot be written is
 * reported on the logger, not thrown.
 */
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import type { Logger } from "../core/log.ts";
import type { CompactionOutcome } from "../agent/seams.ts";
import { occupancyOf } from "../store/rules.ts";
import type { CompactionKind, CompactionStore, PassMeasures, PassOutcome } from "../store/store.ts";
import type { Settings } from "./settings.ts";
import type { FallbackWhy } from "./fallback.ts";

export interface UnchangedPass {
  sessionId: string;
  reason: string;
  kind: CompactionKind;
  outcome: Exclude<PassOutcome, "committed">;
  tokens: number;
  /** For the log line and the outcome only: it may quote an error, so it is not stored. */
  note: string;
  /** A content-free code stored with the row (`lease_held`, `summary_failed`, `not_smaller`, …). */
  why: string;
  measures: PassMeasures;
  until?: number;
}

export class Telemetry {
  #store: CompactionStore;
  #events: EventBus;
  #log: Logger;
  #settings: Settings;
  #clock: Clock;

  constructor(
    options: { store: CompactionStore; events: EventBus; log: Logger; settings: Settings; clock: Clock },
  ) {
    this.#clock = options.clock;
    this.#store = options.store;
    this.#events = options.events;
    this.#log = options.log;
    this.#settings = options.settings;
  }

  occupancy(tokens: number): number {
    return occupancyOf(tokens, this.#settings.limit) ?? 0;
  }

  async unchanged(pass: UnchangedPass): Promise<void> {
    const line = `session ${pass.sessionId}: ${pass.reason} ${pass.kind} ${
      pass.outcome === "failed" ? "failed" : "did nothing"
    }: ${pass.note}`;
    if (pass.outcome === "failed") this.#log.warn(line);
    else this.#log.info(line);
    if (pass.outcome === "failed") {
      this.#events.emit(pass.sessionId, { type: "compaction.failed", reason: pass.reason, error: pass.note });
    }
    if (pass.outcome === "breaker" || pass.outcome === "cooldown" || pass.outcome === "refused_growth") {
      this.#events.emit(pass.sessionId, {
        type: "compaction.blocked",
        reason: pass.outcome,
        kind: pass.kind,
        trigger: pass.reason,
        before_tokens: pass.tokens,
        until: pass.until === undefined ? null : new Date(pass.until).toISOString(),
      });
    }
    try {
      await this.#store.recordCompactionPass({
        sessionId: pass.sessionId,
        now: this.#clock.now(),
        kind: pass.kind,
        reason: pass.reason,
        outcome: pass.outcome,
        tokens: pass.tokens,
        measures: pass.measures,
        detail: { why: pass.why },
      });
    } catch (error) {
      this.#log.warn(`session ${pass.sessionId}: could not log a compaction pass: ${errorMessage(error)}`);
    }
  }

  /**
   * The deterministic fallback ran instead of a summary: `compaction.blocked` (with `fallback: true`) and a
   * warning on stderr, since what the session knew of the dropped messages is now a marker.
   */
  fellBack(pass: {
    sessionId: string;
    trigger: string;
    /** A committed fallback: never `lease_held`, which only shapes an uncommitted view. */
    why: Exclude<FallbackWhy, "lease_held">;
    note: string;
    dropped: number;
    before: number;
    until?: number;
  }): void {
    this.#log.warn(
      `session ${pass.sessionId}: no summary (${pass.note}); the fallback dropped ${pass.dropped} earlier ` +
        `messages behind one marker to fit the context window — they stay archived and searchable ` +
        `(hermes sessions show ${pass.sessionId} --all)`,
    );
    this.#events.emit(pass.sessionId, {
      type: "compaction.blocked",
      reason: pass.why,
      kind: "summarize",
      trigger: pass.trigger,
      before_tokens: pass.before,
      until: pass.until === undefined ? null : new Date(pass.until).toISOString(),
      fallback: true,
    });
  }

  /** After the session's `count`-th hard compaction: from the second on, details of early work may be lost. */
  compactedTimes(sessionId: string, count: number): void {
    // Every time up to 4, then at each power of two: visible, without a line per pass on a 4k window.
    if (count < 2 || (count > 4 && (count & (count - 1)) !== 0)) return;
    this.#log.warn(
      `session ${sessionId}: context compacted ${count} times, details of earlier work may be lost ` +
        `(the originals are archived: hermes sessions show ${sessionId} --all)`,
    );
  }

  /** A committed pass: its row was written by the commit; this reports it. */
  committed(pass: {
    sessionId: string;
    reason: string;
    outcome: CompactionOutcome;
    compactionId: number;
  }): void {
    const { outcome } = pass;
    this.#log.info(
      `session ${pass.sessionId}: ${outcome.kind} (${pass.reason}) ${outcome.before_tokens} → ` +
        `${outcome.after_tokens} tokens, occupancy ${Math.round(outcome.occupancy * 100)}%, ` +
        `${outcome.messages_removed} messages fewer`,
    );
    this.#events.emit(pass.sessionId, {
      type: "compaction",
      kind: outcome.kind ?? "summarize",
      reason: pass.reason,
      before_tokens: outcome.before_tokens,
      after_tokens: outcome.after_tokens,
      messages_removed: outcome.messages_removed,
      compaction_id: pass.compactionId,
      occupancy: outcome.occupancy,
    });
  }
}
