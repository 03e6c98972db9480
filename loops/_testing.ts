/**
 * Test support for loops/: an AgentLike whose model answers are scripted (the only fake besides time),
 * and a helper that advances a ManualClock until a promise settles.
 */
import type { Clock } from "../runtime/core/clock.ts";
import type { ManualClock } from "../runtime/core/_testing.ts";
import type { AgentLike, PromptOptions, PromptResult } from "../runtime/agent/seams.ts";
import { parseSlash, type SlashCommand } from "../runtime/agent/slash.ts";

/** A scripted answer: text, text after a delay on the clock, or a failure. */
export type ScriptedReply = string | { text: string; delay_ms: number } | Error;

export interface PromptRecord {
  text: string;
  at: number;
  source: string;
}

export class ScriptedAgent implements AgentLike {
  readonly sessionId: string;
  readonly prompts: PromptRecord[] = [];
  #busy = false;
  #queue: Promise<unknown> = Promise.resolve();
  #commands = new Map<string, SlashCommand>();
  #clock: Clock;
  #replies: ScriptedReply[];
  #fallback: string;

  constructor(sessionId: string, clock: Clock, replies: ScriptedReply[] = [], fallback = "ok") {
    this.sessionId = sessionId;
    this.#clock = clock;
    this.#replies = replies;
    this.#fallback = fallback;
  }

  get busy(): boolean {
    return this.#busy;
  }

  addCommands(commands: SlashCommand[]): void {
    for (const command of commands) this.#commands.set(command.name, command);
  }

  prompt(text: string, options: PromptOptions): Promise<PromptResult> {
    const run = this.#queue.then(() => this.#turn(text, options));
    this.#queue = run.catch(() => {});
    return run;
  }

  input(text: string, options: PromptOptions): Promise<PromptResult> {
    const slash = parseSlash(text);
    if (!slash) return this.prompt(text, options);
    const command = this.#commands.get(slash.name);
    if (!command) return Promise.reject(new Error(`no command /${slash.name}`));
    const signal = options.signal ?? new AbortController().signal;
    return command.run(slash.args, { session_id: this.sessionId, source: options.source, signal })
      .then((final) => ({ final, model_calls: 0 }));
  }

  async #turn(text: string, options: PromptOptions): Promise<PromptResult> {
    options.signal?.throwIfAborted();
    this.#busy = true;
    try {
      this.prompts.push({ text, at: this.#clock.now(), source: options.source });
      const reply = this.#replies.shift() ?? this.#fallback;
      if (reply instanceof Error) throw reply;
      if (typeof reply === "string") return { final: reply, model_calls: 1 };
      await this.#clock.sleep(reply.delay_ms, options.signal);
      return { final: reply.text, model_calls: 1 };
    } finally {
      this.#busy = false;
    }
  }
}

/** Advances `clock` in steps until `promise` settles; returns its value or throws its error. */
export async function advanceUntil<T>(
  clock: ManualClock,
  promise: Promise<T>,
  options: { stepMs?: number; maxMs?: number } = {},
): Promise<T> {
  const step = options.stepMs ?? 100;
  const max = options.maxMs ?? 600_000;
  let settled = false;
  promise.then(() => settled = true, () => settled = true);
  for (let elapsed = 0; !settled; elapsed += step) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (settled) break;
    if (elapsed >= max) throw new Error(`did not settle within ${max} ms of clock time`);
    await clock.advance(step);
  }
  return await promise;
}

/** Advances `clock` by `ms` in steps, letting pending work run between steps. */
export async function advance(clock: ManualClock, ms: number, stepMs = 100): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += stepMs) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await clock.advance(Math.min(stepMs, ms - elapsed));
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
}
