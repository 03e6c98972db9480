/**
 * A session's loop as stored in session_kv under `loop`: pure transitions, so a new process
 * (`hermes run --resume`, the daemon) continues from the stored tick count and due time.
 * A tick is counted only once its turn has finished; nothing marks a tick as in flight, so a crash or a
 * failed turn leaves the loop exactly as it was before that tick.
 */
import { formatDuration } from "../runtime/core/duration.ts";
import type { CommandSource } from "../runtime/agent/slash.ts";
import type { LoopStart } from "./loop_args.ts";
import { nextSelfPacedDelay, type Pacing } from "./self_paced.ts";
import type { TickDecision } from "./stop_order.ts";

export { LOOP_KEY } from "./recurring_keys.ts";

export interface LoopState {
  v: 1;
  /** Tells a replaced loop from its successor. */
  id: string;
  prompt: string;
  /** null: self-paced. */
  interval_ms: number | null;
  times: number | null;
  until: string | null;
  source: CommandSource;
  status: "active" | "paused" | "done";
  /** Why it is paused or done (`complete`, `until`, `times`, `stopped`, `replaced`, `blocked`, `max_ticks`, `paused`). */
  reason: string | null;
  /** Completed ticks. */
  tick: number;
  /** `tick` when the loop was started or last resumed: `max_ticks` counts from here. */
  budget_start: number;
  next_due: number;
  /** The current delay between ticks (doubles while a self-paced loop sees no change). */
  delay_ms: number;
  digest: string | null;
  last_final: string;
  started_at: number;
  updated_at: number;
}

export function newLoop(
  start: LoopStart & { interval_ms: number | null },
  options: { id: string; now: number; source: CommandSource; floor_ms: number },
): LoopState {
  return {
    v: 1,
    id: options.id,
    prompt: start.prompt,
    interval_ms: start.interval_ms,
    times: start.times,
    until: start.until,
    source: options.source,
    status: "active",
    reason: null,
    tick: 0,
    budget_start: 0,
    next_due: options.now,
    delay_ms: start.interval_ms ?? options.floor_ms,
    digest: null,
    last_final: "",
    started_at: options.now,
    updated_at: options.now,
  };
}

/** Records a finished tick: counted, paced from the end of its turn, stopped or paused as decided. */
export function afterTick(
  state: LoopState,
  outcome: { decision: TickDecision; digest: string; reply: string; ended_at: number; pacing: Pacing },
): LoopState {
  const delay = state.interval_ms ?? nextSelfPacedDelay(state, outcome.digest, outcome.pacing);
  const next: LoopState = {
    ...state,
    tick: state.tick + 1,
    digest: outcome.digest,
    delay_ms: delay,
    next_due: outcome.ended_at + delay,
    last_final: outcome.reply.length > 2000 ? `${outcome.reply.slice(0, 2000)}…` : outcome.reply,
    updated_at: outcome.ended_at,
  };
  // A /loop pause or stop during the turn still counts the tick but keeps the user's decision.
  if (state.status !== "active") return next;
  const { decision } = outcome;
  if (decision.action === "done") return { ...next, status: "done", reason: decision.reason };
  if (decision.action === "pause") return { ...next, status: "paused", reason: decision.reason };
  return next;
}

export function pauseLoop(state: LoopState, now: number): LoopState {
  return state.status === "active"
    ? { ...state, status: "paused", reason: "paused", updated_at: now }
    : state;
}

/** A resumed loop ticks at once and gets a fresh `max_ticks` budget. */
export function resumeLoop(state: LoopState, now: number): LoopState {
  if (state.status !== "paused") return state;
  return {
    ...state,
    status: "active",
    reason: null,
    budget_start: state.tick,
    next_due: now,
    updated_at: now,
  };
}

export function endLoop(state: LoopState, reason: "stopped" | "replaced", now: number): LoopState {
  return { ...state, status: "done", reason, updated_at: now };
}

const REASONS: Record<string, string> = {
  complete: "the model answered LOOP_COMPLETE",
  until: "the --until condition was met",
  times: "--times was reached",
  stopped: "stopped by /loop stop",
  replaced: "replaced by a new /loop",
  blocked: "the --until condition is blocked (needs outside help)",
  max_ticks: "loops.max_ticks was reached",
  paused: "paused by /loop pause",
};

export function describeReason(reason: string | null): string {
  return reason === null ? "" : REASONS[reason] ?? reason;
}

export function describeLoop(state: LoopState, now: number, maxTicks: number): string {
  const pace = state.interval_ms === null
    ? `self-paced (now ${formatDuration(state.delay_ms)})`
    : `every ${formatDuration(state.interval_ms)}`;
  const limits = [
    ...(state.times !== null ? [`--times ${state.times}`] : []),
    ...(state.until !== null ? [`--until ${state.until}`] : []),
    `max_ticks ${maxTicks}`,
  ].join(", ");
  const lines = [
    `Loop ${state.status}: ${pace} — "${state.prompt}"`,
    `Ticks: ${state.tick} (${limits})`,
  ];
  if (state.status === "active") {
    const wait = Math.max(0, state.next_due - now);
    lines.push(wait === 0 ? "Next tick: due now" : `Next tick: in ${formatDuration(wait)}`);
  } else {
    lines.push(`Reason: ${describeReason(state.reason)}`);
  }
  if (state.last_final !== "") lines.push(`Last reply: ${oneLine(state.last_final, 200)}`);
  return lines.join("\n");
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
