/** The `/heartbeat` slash command (docs/slash-commands.md). Setting a heartbeat runs nothing now: beats come when due. */
import { formatDuration } from "../runtime/core/duration.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import type { AgentLike } from "../runtime/agent/seams.ts";
import type { CommandSource, SlashCommand } from "../runtime/agent/slash.ts";
import type { RecurringContext } from "./_context.ts";
import { type HeartbeatControl, parseHeartbeatArgs } from "./heartbeat_args.ts";
import {
  describeHeartbeat,
  HEARTBEAT_KEY,
  type HeartbeatState,
  newHeartbeat,
  pauseHeartbeat,
  resumeHeartbeat,
} from "./heartbeat_state.ts";
import { plural } from "./loop_command.ts";
import { RECURRING_COMMANDS } from "./recurring_commands.ts";

export function heartbeatCommand(ctx: RecurringContext, agent: AgentLike): SlashCommand {
  return {
    name: "heartbeat",
    description: RECURRING_COMMANDS.heartbeat,
    run: (args, context) => heartbeat(ctx, agent.sessionId, args, context.source),
  };
}

async function heartbeat(
  ctx: RecurringContext,
  sessionId: string,
  args: string,
  source: CommandSource,
): Promise<string> {
  const parsed = parseHeartbeatArgs(args);
  if (parsed.kind === "control") return await control(ctx, sessionId, parsed.action);
  const min = ctx.settings.heartbeat_min_interval_ms;
  if (parsed.interval_ms < min) {
    throw new ValidationError(
      `Cannot set /heartbeat every ${parsed.interval_text}: the interval is below heartbeat.min_interval ` +
        `(${formatDuration(min)})`,
    );
  }
  const previous = await ctx.store.getState<HeartbeatState>(sessionId, HEARTBEAT_KEY);
  const state = newHeartbeat(parsed, { id: ctx.newId(), now: ctx.clock.now(), source });
  await ctx.store.setState(sessionId, HEARTBEAT_KEY, state);
  ctx.wake(sessionId);
  const every = formatDuration(parsed.interval_ms);
  return [
    `Heartbeat set: every ${every} — "${parsed.prompt}". The first beat comes in ${every}, when the session is idle.`,
    ...(previous ? [`Note: replaced the previous heartbeat ("${previous.prompt}").`] : []),
  ].join("\n");
}

async function control(ctx: RecurringContext, sessionId: string, action: HeartbeatControl): Promise<string> {
  const { store, clock } = ctx;
  const state = await store.getState<HeartbeatState>(sessionId, HEARTBEAT_KEY);
  if (!state) return "No heartbeat in this session.";
  if (action === "status") return describeHeartbeat(state, clock.now());
  if (action === "clear") {
    await store.deleteState(sessionId, HEARTBEAT_KEY);
    ctx.wake(sessionId);
    return `Heartbeat cleared after ${plural(state.beats, "beat")}.`;
  }
  if (action === "pause") {
    if (state.status === "paused") return "The heartbeat is already paused.";
    await store.setState(sessionId, HEARTBEAT_KEY, pauseHeartbeat(state));
    ctx.wake(sessionId);
    return `Heartbeat paused after ${plural(state.beats, "beat")}. /heartbeat resume continues it.`;
  }
  if (state.status === "active") return "The heartbeat is already running.";
  await store.setState(sessionId, HEARTBEAT_KEY, resumeHeartbeat(state, clock.now()));
  ctx.wake(sessionId);
  return `Heartbeat resumed: the next beat comes in ${
    formatDuration(state.interval_ms)
  }, when the session is idle.`;
}
