/**
 * Whether a session has an active `/loop` or `/heartbeat` (not paused, not ended): the one place that decides
 * it, for the live driver (`Recurring.isActive`), `hermes run --resume` planning and the daemon's scan for
 * orphaned sessions.
 */
import type { SessionStore } from "../runtime/store/store.ts";
import { HEARTBEAT_KEY, LOOP_KEY } from "./recurring_keys.ts";

/** The session_kv keys that hold recurring work; each value has a `status`. */
export const RECURRING_KEYS: readonly string[] = [LOOP_KEY, HEARTBEAT_KEY];

/** True for a stored loop or heartbeat state that keeps the session going. */
export function isActiveState<T extends { status?: unknown }>(
  state: T | undefined,
): state is T & { status: "active" } {
  return state?.status === "active";
}

/** True when one of the stored recurring states (key → value, as the store returns them) is active. */
export function hasActiveRecurring(states: Record<string, unknown>): boolean {
  return RECURRING_KEYS.some((key) => isActiveState(states[key] as { status?: unknown } | undefined));
}

export async function isRecurringActive(store: SessionStore, sessionId: string): Promise<boolean> {
  for (const key of RECURRING_KEYS) {
    if (isActiveState(await store.getState<{ status?: unknown }>(sessionId, key))) return true;
  }
  return false;
}
