/** The `/loop` slash command (docs/slash-commands.md). Starting a loop runs its first tick before returning. */
import { formatDuration } from "../runtime/core/duration.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import type { AgentLike } from "../runtime/agent/seams.ts";
import { type CommandContext, parseSlash, type SlashCommand } from "../runtime/agent/slash.ts";
import type { RecurringContext } from "./_context.ts";
import { runLoopTick } from "./_tick.ts";
import { RECURRING_COMMANDS } from "./recurring_commands.ts";
import { type LoopControl, type LoopStart, parseLoopArgs } from "./loop_args.ts";
import {
  describeLoop,
  describeReason,
  endLoop,
  LOOP_KEY,
  type LoopState,
  newLoop,
  pauseLoop,
  resumeLoop,
} from "./loop_state.ts";

export function loopCommand(ctx: RecurringContext, agent: AgentLike): SlashCommand {
  return {
    name: "loop",
    description: RECURRING_COMMANDS.loop,
    run: async (args, context) => {
      const parsed = parseLoopArgs(args);
      return parsed.kind === "control"
        ? await control(ctx, agent.sessionId, parsed.action)
        : await start(ctx, agent, parsed, context);
    },
  };
}

async function start(ctx: RecurringContext, agent: AgentLike, args: LoopStart, context: CommandContext) {
  const { store, clock, settings } = ctx;
  const sessionId = agent.sessionId;
  if (args.until !== null && !ctx.judge) {
    throw new ValidationError("Cannot use /loop --until: no model is available to judge the condition");
  }
  const command = parseSlash(args.prompt)?.name;
  if (command === "loop" || command === "heartbeat") {
    throw new ValidationError(`Cannot loop /${command}: a loop runs a prompt or another slash command`);
  }
  const notes: string[] = [];
  let interval = args.interval_ms;
  if (interval !== null && interval < settings.loop_min_interval_ms) {
    const note =
      `interval ${args.interval_text} raised to ${formatDuration(settings.loop_min_interval_ms)} ` +
      "(loops.min_interval)";
    notes.push(`Note: ${note}.`);
    // Said outside the command's output too: a job step's output is not what a CI log shows.
    ctx.log.warn(`/loop: ${note}`);
    ctx.events.emit(sessionId, {
      type: "interval.raised",
      command: "loop",
      setting: "loops.min_interval",
      requested_ms: interval,
      interval_ms: settings.loop_min_interval_ms,
    });
    interval = settings.loop_min_interval_ms;
  }
  const previous = await store.getState<LoopState>(sessionId, LOOP_KEY);
  if (previous && previous.status !== "done") {
    await store.setState(sessionId, LOOP_KEY, endLoop(previous, "replaced", clock.now()));
    ctx.events.emit(sessionId, {
      type: "loop.end",
      reason: "replaced",
      status: "done",
      ticks: previous.tick,
    });
    notes.push(`Note: replaced the previous loop ("${previous.prompt}", ${plural(previous.tick, "tick")}).`);
  }
  const state = newLoop({ ...args, interval_ms: interval }, {
    id: ctx.newId(),
    now: clock.now(),
    source: context.source,
    floor_ms: settings.self_paced_floor_ms,
  });
  await store.setState(sessionId, LOOP_KEY, state);
  ctx.wake(sessionId);

  const pace = interval === null
    ? `self-paced from ${formatDuration(settings.self_paced_floor_ms)} up to ${
      formatDuration(settings.self_paced_ceiling_ms)
    }`
    : `every ${formatDuration(interval)}`;
  const bounds = [
    ...(args.times !== null ? [`up to ${plural(args.times, "tick")}`] : []),
    ...(args.until !== null ? [`until ${args.until}`] : []),
  ];
  const header = `Loop started: ${[pace, ...bounds].join(", ")} — "${args.prompt}".`;
  const { state: after, final } = await firstTick(ctx, agent, state, context.signal);
  let footer: string;
  if (!after || after.id !== state.id) footer = "The loop was replaced during its first tick.";
  else if (after.status === "active") {
    // The delay decided when the tick ended, not the time left now: the store write after it takes time.
    footer = `Next tick in ${formatDuration(after.next_due - after.updated_at)}.`;
  } else {footer = `Loop ${after.status} after ${plural(after.tick, "tick")}: ${
      describeReason(after.reason)
    }.`;}
  return [header, ...notes, "", final, "", footer].join("\n");
}

/** The first tick runs inside the command; a loop whose command fails there (unknown, say) does not stay. */
async function firstTick(ctx: RecurringContext, agent: AgentLike, state: LoopState, signal: AbortSignal) {
  try {
    return await runLoopTick(ctx, agent, state, signal);
  } catch (error) {
    const current = await ctx.store.getState<LoopState>(agent.sessionId, LOOP_KEY);
    if (current?.id === state.id && parseSlash(state.prompt)) {
      await ctx.store.setState(agent.sessionId, LOOP_KEY, endLoop(current, "stopped", ctx.clock.now()));
      ctx.events.emit(agent.sessionId, { type: "loop.end", reason: "stopped", status: "done", ticks: 0 });
    }
    throw error;
  }
}

async function control(ctx: RecurringContext, sessionId: string, action: LoopControl): Promise<string> {
  const { store, clock } = ctx;
  const state = await store.getState<LoopState>(sessionId, LOOP_KEY);
  const now = clock.now();
  if (action === "status") {
    return state ? describeLoop(state, now, ctx.settings.max_ticks) : "No loop in this session.";
  }
  if (action === "pause") {
    if (state?.status !== "active") {
      return state?.status === "paused" ? "The loop is already paused." : "No active loop to pause.";
    }
    await store.setState(sessionId, LOOP_KEY, pauseLoop(state, now));
    ctx.events.emit(sessionId, { type: "loop.end", reason: "paused", status: "paused", ticks: state.tick });
    ctx.wake(sessionId);
    return `Loop paused after ${plural(state.tick, "tick")}. /loop resume continues it.`;
  }
  if (action === "resume") {
    if (state?.status !== "paused") {
      return state?.status === "active" ? "The loop is already running." : "No paused loop to resume.";
    }
    await store.setState(sessionId, LOOP_KEY, resumeLoop(state, now));
    ctx.wake(sessionId);
    return `Loop resumed at tick ${state.tick}: the next tick runs now, with a fresh budget of ` +
      `${plural(ctx.settings.max_ticks, "tick")} (loops.max_ticks).`;
  }
  if (!state || state.status === "done") return "No loop to stop.";
  await store.setState(sessionId, LOOP_KEY, endLoop(state, "stopped", now));
  ctx.events.emit(sessionId, { type: "loop.end", reason: "stopped", status: "done", ticks: state.tick });
  ctx.wake(sessionId);
  return `Loop stopped after ${plural(state.tick, "tick")}.`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
