/**
 * Recurring work in a live session (docs/slash-commands.md): `/loop` and `/heartbeat`, and the driver that runs
 * their later ticks and beats. State lives in the store, so any process that holds the session can
 * drive it; the driver sleeps on the injected clock until the next tick or beat is due.
 */
import type { Clock } from "../runtime/core/clock.ts";
import type { EventBus } from "../runtime/core/events.ts";
import type { Hooks } from "../runtime/core/hooks.ts";
import type { HeartbeatConfig, LoopsConfig } from "../runtime/config/job_schema.ts";
import type { Logger } from "../runtime/core/log.ts";
import type { Recurring } from "../runtime/agent/seams.ts";
import type { SessionStore } from "../runtime/store/store.ts";
import type { Judge, RecurringContext } from "./_context.ts";
import { runBeat, runLoopTick } from "./_tick.ts";
import { heartbeatCommand } from "./heartbeat_command.ts";
import { beatDueAt, HEARTBEAT_KEY, type HeartbeatState, isBeatDue } from "./heartbeat_state.ts";
import { loopCommand } from "./loop_command.ts";
import { LOOP_KEY, type LoopState } from "./loop_state.ts";
import { resolveSettings } from "./recurring_config.ts";
import { isActiveState, isRecurringActive } from "./recurring_active.ts";

export type { Judge } from "./_context.ts";

export interface RecurringOptions {
  store: SessionStore;
  clock: Clock;
  events: EventBus;
  hooks: Hooks;
  log: Logger;
  loops?: LoopsConfig;
  heartbeat?: HeartbeatConfig;
  /** Answers `--until` questions with a model call outside the transcript. */
  judge?: Judge;
  /** How often a due beat re-checks whether the session has become idle (default 250 ms). */
  idlePollMs?: number;
}

/** Longest single sleep; a sleeper re-reads the store at least this often. */
const MAX_SLEEP_MS = 3_600_000;

export function createRecurring(options: RecurringOptions): Recurring {
  const wakers = new Map<string, Set<AbortController>>();
  const driving = new Set<string>();
  const ctx: RecurringContext = {
    store: options.store,
    clock: options.clock,
    events: options.events,
    hooks: options.hooks,
    log: options.log,
    settings: resolveSettings(options.loops, options.heartbeat),
    ...(options.judge ? { judge: options.judge } : {}),
    running: new Map(),
    wake: (sessionId) => {
      for (const waker of wakers.get(sessionId) ?? []) waker.abort();
    },
    newId: () => crypto.randomUUID(),
  };
  const idlePollMs = options.idlePollMs ?? 250;
  const readLoop = (id: string) => ctx.store.getState<LoopState>(id, LOOP_KEY);
  const readHeartbeat = (id: string) => ctx.store.getState<HeartbeatState>(id, HEARTBEAT_KEY);

  /** Sleeps until `ms` passes, the session's state changes, or `signal` aborts (then throws its reason). */
  async function sleep(sessionId: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    const waker = new AbortController();
    const set = wakers.get(sessionId) ?? new Set();
    wakers.set(sessionId, set.add(waker));
    try {
      await ctx.clock.sleep(
        Math.min(Math.max(0, ms), MAX_SLEEP_MS),
        AbortSignal.any([
          waker.signal,
          ...(signal ? [signal] : []),
        ]),
      );
    } catch {
      // woken early; the caller re-reads the state
    } finally {
      set.delete(waker);
      if (set.size === 0) wakers.delete(sessionId);
    }
    signal?.throwIfAborted();
  }

  return {
    commands: (agent) => [loopCommand(ctx, agent), heartbeatCommand(ctx, agent)],

    isActive: (sessionId) => isRecurringActive(ctx.store, sessionId),

    async drive(agent, { signal }) {
      const sessionId = agent.sessionId;
      if (driving.has(sessionId)) {
        throw new Error(`Cannot drive session ${sessionId}: it is already being driven`);
      }
      driving.add(sessionId);
      let final: string | undefined;
      try {
        while (true) {
          signal?.throwIfAborted();
          const loop = await readLoop(sessionId);
          const heartbeat = await readHeartbeat(sessionId);
          const loopActive = isActiveState(loop);
          const beating = isActiveState(heartbeat);
          if (!loopActive && !beating) {
            const reason = loop?.status === "done"
              ? "loop_done"
              : loop?.status === "paused"
              ? "loop_paused"
              : "idle";
            return { reason, final: final ?? loop?.last_final ?? heartbeat?.last_final ?? "" };
          }
          if (ctx.running.has(sessionId)) {
            await sleep(sessionId, MAX_SLEEP_MS, signal); // a command's tick is running; its end wakes us
            continue;
          }
          const now = ctx.clock.now();
          if (loopActive && loop.next_due <= now) {
            final = (await runLoopTick(ctx, agent, loop, signal)).final;
            continue;
          }
          const beatDue = beating ? beatDueAt(heartbeat) : Infinity;
          if (beatDue <= now) {
            if (isBeatDue(heartbeat!, now, agent.busy)) {
              final = (await runBeat(ctx, agent, heartbeat!, signal)).final;
            } else await sleep(sessionId, idlePollMs, signal); // real input goes first
            continue;
          }
          await sleep(sessionId, Math.min(loopActive ? loop.next_due : Infinity, beatDue) - now, signal);
        }
      } finally {
        driving.delete(sessionId);
      }
    },
  };
}
