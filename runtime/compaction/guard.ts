/**
 * Guards against compaction loops, kept durable in session_kv so a restart does not reset them:
 * an ineffective compaction is a strike and two in a row open a breaker for a recovery window (then one probe
 * is allowed); a failed summary call arms a cooldown that grows 60 s → 300 s → 900 s.
 * Only automatic compaction is gated; `/compress` is not.
 */
import type { SessionStore } from "../store/store.ts";
import { BREAKER_WINDOW_MS } from "./settings.ts";

export const GUARD_KEY = "compaction.guard";
export const COOLDOWN_LADDER_MS: readonly number[] = [60_000, 300_000, 900_000];

export interface GuardState {
  /** Ineffective compactions in a row (refused as not smaller, or still over threshold afterwards). */
  ineffective: number;
  /** Automatic compaction is off until then (epoch ms). */
  breaker_until: number | null;
  /** Failed or timed-out summary calls in a row. */
  failures: number;
  /** No automatic summary call until then (epoch ms). */
  cooldown_until: number | null;
}

export const initialGuard: GuardState = {
  ineffective: 0,
  breaker_until: null,
  failures: 0,
  cooldown_until: null,
};

/** The guard state a stored value (or none) stands for. */
export function guardFrom(stored: unknown): GuardState {
  return { ...initialGuard, ...(stored as Partial<GuardState> | undefined) };
}

export async function readGuard(store: SessionStore, sessionId: string): Promise<GuardState> {
  return guardFrom(await store.getState(sessionId, GUARD_KEY));
}

export async function writeGuard(store: SessionStore, sessionId: string, state: GuardState): Promise<void> {
  await store.setState(sessionId, GUARD_KEY, state);
}

export interface GuardBlock {
  reason: "breaker" | "cooldown";
  /** Epoch ms when automatic compaction may run again. */
  until: number;
  note: string;
}

/** Why automatic compaction may not run at `now`, or null when it may. */
export function guardBlock(state: GuardState, now: number): GuardBlock | null {
  if (state.breaker_until !== null && now < state.breaker_until) {
    return {
      reason: "breaker",
      until: state.breaker_until,
      note: `automatic compaction is paused until ${
        iso(state.breaker_until)
      } after ${state.ineffective} ineffective attempts in a row`,
    };
  }
  if (state.cooldown_until !== null && now < state.cooldown_until) {
    return {
      reason: "cooldown",
      until: state.cooldown_until,
      note: `summary calls are cooling down until ${
        iso(state.cooldown_until)
      } after ${state.failures} failed attempt(s)`,
    };
  }
  return null;
}

export function afterIneffective(state: GuardState, at: { now: number; windowMs?: number }): GuardState {
  const ineffective = state.ineffective + 1;
  const breakerUntil = at.now + (at.windowMs ?? BREAKER_WINDOW_MS);
  return { ...state, ineffective, breaker_until: ineffective >= 2 ? breakerUntil : state.breaker_until };
}

export function afterEffective(state: GuardState): GuardState {
  return { ...state, ineffective: 0, breaker_until: null };
}

export function afterSummaryFailure(state: GuardState, now: number): GuardState {
  const failures = state.failures + 1;
  const delay = COOLDOWN_LADDER_MS[Math.min(failures, COOLDOWN_LADDER_MS.length) - 1]!;
  return { ...state, failures, cooldown_until: now + delay };
}

export function afterSummarySuccess(state: GuardState): GuardState {
  return { ...state, failures: 0, cooldown_until: null };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
