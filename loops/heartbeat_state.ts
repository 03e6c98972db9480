/**
 * A session's heartbeat as stored in session_kv under `heartbeat`. A beat is due when `interval_ms`
 * has passed since the anchor and the session is idle. The anchor moves to the end of each beat, so
 * any number of missed beats coalesce into one, and `resume` re-anchors so no stale beat fires at once.
 */
import { formatDuration } from "../runtime/core/duration.ts";
import type { CommandSource } from "../runtime/agent/slash.ts";
import { oneLine } from "./loop_state.ts";

export { HEARTBEAT_KEY } from "./recurring_keys.ts";

export interface HeartbeatState {
  v: 1;
  id: string;
  prompt: string;
  interval_ms: number;
  source: CommandSource;
  status: "active" | "paused";
  beats: number;
  /** When the last beat ended (or the heartbeat was set or resumed). */
  anchor: number;
  last_final: string;
  created_at: number;
}

export function newHeartbeat(
  set: { prompt: string; interval_ms: number },
  options: { id: string; now: number; source: CommandSource },
): HeartbeatState {
  return {
    v: 1,
    id: options.id,
    prompt: set.prompt,
    interval_ms: set.interval_ms,
    source: options.source,
    status: "active",
    beats: 0,
    anchor: options.now,
    last_final: "",
    created_at: options.now,
  };
}

export function beatDueAt(state: HeartbeatState): number {
  return state.anchor + state.interval_ms;
}

/** True when a beat should fire now: active, due, and no turn is running (real input goes first). */
export function isBeatDue(state: HeartbeatState, now: number, busy: boolean): boolean {
  return state.status === "active" && !busy && beatDueAt(state) <= now;
}

export function afterBeat(state: HeartbeatState, reply: string, endedAt: number): HeartbeatState {
  return {
    ...state,
    beats: state.beats + 1,
    anchor: endedAt,
    last_final: reply.length > 2000 ? `${reply.slice(0, 2000)}…` : reply,
  };
}

export function pauseHeartbeat(state: HeartbeatState): HeartbeatState {
  return { ...state, status: "paused" };
}

export function resumeHeartbeat(state: HeartbeatState, now: number): HeartbeatState {
  return state.status === "paused" ? { ...state, status: "active", anchor: now } : state;
}

export function describeHeartbeat(state: HeartbeatState, now: number): string {
  const lines = [
    `Heartbeat ${state.status}: every ${formatDuration(state.interval_ms)} — "${state.prompt}"`,
    `Beats: ${state.beats}`,
  ];
  if (state.status === "active") {
    const wait = Math.max(0, beatDueAt(state) - now);
    lines.push(
      wait === 0 ? "Next beat: due now (when idle)" : `Next beat: in ${formatDuration(wait)} (when idle)`,
    );
  }
  if (state.last_final !== "") lines.push(`Last reply: ${oneLine(state.last_final, 200)}`);
  return lines.join("\n");
}
