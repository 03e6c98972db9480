/**
 * One loop tick or heartbeat beat: announce it (event + `on_loop_tick`), run the turn, then record the
 * outcome in one write. A turn that throws records nothing, so the tick is not counted and stays due.
 */
import type { AgentLike } from "../runtime/agent/seams.ts";
import { parseSlash } from "../runtime/agent/slash.ts";
import type { RecurringContext } from "./_context.ts";
import { afterBeat, HEARTBEAT_KEY, type HeartbeatState } from "./heartbeat_state.ts";
import { afterTick, LOOP_KEY, type LoopState } from "./loop_state.ts";
import { heartbeatPrompt, judgeQuestion, parseVerdict, tickPrompt, type Verdict } from "./loop_text.ts";
import { replyDigest } from "./self_paced.ts";
import { decideAfterTick } from "./stop_order.ts";

export interface TickOutcome<T> {
  /** The stored state after the turn (another loop's, if this one was replaced meanwhile). */
  state: T | undefined;
  final: string;
}

export async function runLoopTick(
  ctx: RecurringContext,
  agent: AgentLike,
  state: LoopState,
  signal?: AbortSignal,
): Promise<TickOutcome<LoopState>> {
  const sessionId = agent.sessionId;
  const tick = state.tick + 1;
  return await whileRunning(ctx, sessionId, async () => {
    ctx.events.emit(sessionId, {
      type: "loop.tick",
      tick,
      prompt: state.prompt,
      interval_ms: state.interval_ms,
      times: state.times,
    });
    await tickHook(ctx, sessionId, "loop", tick);
    const turn = { source: state.source, ...(signal ? { signal } : {}) };
    // `/loop 10m /status`: a prompt that is a slash command runs that command each tick (docs/slash-commands.md).
    const { final } = parseSlash(state.prompt) ? await agent.input(state.prompt, turn) : await agent.prompt(
      tickPrompt({ prompt: state.prompt, tick, interval_ms: state.interval_ms, times: state.times }),
      turn,
    );
    const endedAt = ctx.clock.now();
    const decision = await decideAfterTick({
      reply: final,
      tick,
      ticks_since_resume: tick - state.budget_start,
      times: state.times,
      max_ticks: ctx.settings.max_ticks,
      until: state.until,
      judge: (condition, reply) => askJudge(ctx, condition, reply, signal),
    });
    if (decision.action === "continue" && decision.judge_error !== undefined) {
      ctx.log.warn(`loop judge failed (${decision.judge_error}); the loop goes on`);
    }
    const current = await ctx.store.getState<LoopState>(sessionId, LOOP_KEY);
    if (!current || current.id !== state.id) return { state: current, final };
    const next = afterTick(current, {
      decision,
      digest: await replyDigest(final),
      reply: final,
      ended_at: endedAt,
      pacing: { floor_ms: ctx.settings.self_paced_floor_ms, ceiling_ms: ctx.settings.self_paced_ceiling_ms },
    });
    await ctx.store.setState(sessionId, LOOP_KEY, next);
    if (current.status === "active" && next.status !== "active") {
      ctx.events.emit(sessionId, {
        type: "loop.end",
        reason: next.reason,
        status: next.status,
        ticks: next.tick,
      });
    }
    return { state: next, final };
  });
}

export async function runBeat(
  ctx: RecurringContext,
  agent: AgentLike,
  state: HeartbeatState,
  signal?: AbortSignal,
): Promise<TickOutcome<HeartbeatState>> {
  const sessionId = agent.sessionId;
  const beat = state.beats + 1;
  return await whileRunning(ctx, sessionId, async () => {
    ctx.events.emit(sessionId, {
      type: "heartbeat.tick",
      tick: beat,
      prompt: state.prompt,
      interval_ms: state.interval_ms,
    });
    await tickHook(ctx, sessionId, "heartbeat", beat);
    const text = heartbeatPrompt(state.prompt, state.interval_ms);
    const { final } = await agent.prompt(text, { source: state.source, ...(signal ? { signal } : {}) });
    const current = await ctx.store.getState<HeartbeatState>(sessionId, HEARTBEAT_KEY);
    if (!current || current.id !== state.id) return { state: current, final };
    const next = afterBeat(current, final, ctx.clock.now());
    await ctx.store.setState(sessionId, HEARTBEAT_KEY, next);
    return { state: next, final };
  });
}

async function whileRunning<T>(ctx: RecurringContext, sessionId: string, fn: () => Promise<T>): Promise<T> {
  ctx.running.set(sessionId, (ctx.running.get(sessionId) ?? 0) + 1);
  try {
    return await fn();
  } finally {
    const left = (ctx.running.get(sessionId) ?? 1) - 1;
    if (left === 0) ctx.running.delete(sessionId);
    else ctx.running.set(sessionId, left);
    ctx.wake(sessionId);
  }
}

async function tickHook(
  ctx: RecurringContext,
  sessionId: string,
  kind: "loop" | "heartbeat",
  tick: number,
): Promise<void> {
  try {
    await ctx.hooks.onLoopTick({ session_id: sessionId, kind, tick });
  } catch (error) {
    ctx.log.warn(`on_loop_tick failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function askJudge(
  ctx: RecurringContext,
  condition: string,
  reply: string,
  signal: AbortSignal | undefined,
): Promise<Verdict> {
  if (!ctx.judge) throw new Error("no judge model is available");
  const answer = await ctx.judge(judgeQuestion(condition, reply), signal);
  const verdict = parseVerdict(answer);
  if (verdict === null) {
    throw new Error(`the judge answered "${answer.slice(0, 80)}" instead of yes, no or blocked`);
  }
  return verdict;
}
