/**
 * How full a stored session is (docs/compaction.md): its estimated next prompt — the newest real reading plus what was
 * appended after it, at the session's calibration ratio — as a share of the compaction threshold. Cheap: it
 * reads what the check before a model call reads. For `/status` (through the compactor) and RPC `session.get`.
 */
import type { CompactionConfig } from "../config/job_schema.ts";
import type { Occupancy } from "../agent/seams.ts";
import { occupancyOf } from "../store/rules.ts";
import type { SessionStore } from "../store/store.ts";
import { CALIBRATION_KEY, clampRatio, estimateFromInput } from "./estimate.ts";
import { settingsFrom } from "./settings.ts";

/** The calibration ratio stored for the session by its last compaction pass (1 when none). */
export async function storedRatio(store: SessionStore, sessionId: string): Promise<number> {
  const stored = await store.getState<{ ratio?: number }>(sessionId, CALIBRATION_KEY);
  return typeof stored?.ratio === "number" ? clampRatio(stored.ratio) : 1;
}

export function occupancyFor(tokens: number, limits: { threshold: number; window: number }): Occupancy {
  return {
    tokens,
    threshold_tokens: limits.threshold,
    window_tokens: limits.window,
    occupancy: occupancyOf(tokens, limits.threshold) ?? 0,
  };
}

/** The occupancy of a stored session with its job's window and compaction settings. */
export async function sessionOccupancy(
  store: SessionStore,
  sessionId: string,
  job: { context_window: number; max_output_tokens?: number; compaction?: CompactionConfig },
): Promise<Occupancy> {
  const settings = settingsFrom({
    config: job.compaction ?? {},
    model: "",
    context_window: job.context_window,
    ...(job.max_output_tokens === undefined ? {} : { max_output_tokens: job.max_output_tokens }),
  });
  const tokens = estimateFromInput(await store.estimateInput(sessionId), await storedRatio(store, sessionId));
  return occupancyFor(tokens, { threshold: settings.limit, window: settings.windowTokens });
}
