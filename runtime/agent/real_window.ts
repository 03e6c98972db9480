/**
 * The window the server really runs, learnt while a session goes on: from the server itself (llama.cpp,
 * Ollama: asked once, before the first model call), from a "context length exceeded" error naming the
 * limit, and from a response counting clearly fewer prompt tokens than were sent — a server that cut the
 * prompt to its own context without saying so (llama.cpp, Ollama do). Compaction then counts against that
 * window instead of `model.context_window`.
 */
import type { Message, Usage } from "../core/types.ts";

/** chars/4 of a request as sent: contents and tool calls (the estimate compaction uses). */
export function sentTokens(messages: readonly Message[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content.length;
    for (const call of m.tool_calls ?? []) chars += call.name.length + call.arguments.length;
  }
  return Math.ceil(chars / 4);
}

/**
 * The prompt tokens the server kept, when it reports clearly fewer than were sent: under three quarters of
 * what the request should count and at least 1 000 tokens short. What it should count is the chars/4
 * estimate times `ratio`, this server's tokens per chars/4 token on earlier requests that it read whole
 * ({@linkcode TokenRatio}), so a tokenizer that packs text tightly is not mistaken for a truncation. A
 * response served partly from a prompt cache is left alone: hosted APIs with a cache do not truncate, and
 * some count cached input apart.
 */
export function truncatedTo(sent: number, usage: Usage | null, ratio = 1): number | null {
  if (!usage || usage.prompt_tokens <= 0 || (usage.cached_tokens ?? 0) > 0) return null;
  const kept = usage.prompt_tokens;
  const expected = sent * ratio;
  return kept < 0.75 * expected && expected - kept >= 1000 ? kept : null;
}

/** The server's tokens per chars/4 token, from requests it read whole (1 until it has read a sizeable one). */
export class TokenRatio {
  #ratio = 1;

  get value(): number {
    return this.#ratio;
  }

  /** A response that was not truncated: its count calibrates the ratio (within 0.5–2). */
  observe(sent: number, usage: Usage | null): void {
    if (!usage || usage.prompt_tokens <= 0 || sent < 500) return;
    this.#ratio = Math.min(2, Math.max(0.5, usage.prompt_tokens / sent));
  }
}
