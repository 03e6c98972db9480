/**
 * The corpus on the Anthropic Messages API: the scripted Anthropic server (tests/_testing/anthropic_server.ts) playing a
 * {@linkcode Corpus} the way tests/corpus/server.ts plays it over Chat Completions — agent calls answered from
 * the request's last message, summary calls (no tools, or the summary model) with a six-section summary, the
 * window enforced with the API's "prompt is too long" — and its prompt cache emulated by prefix up to each
 * `cache_control` breakpoint, as the API bills it: what a request reads, writes and pays in full.
 */
import { startAnthropicServer, type WireBody } from "../_testing/anthropic_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { type Corpus, parseCallId, turnsMentioned } from "./corpus.ts";
import { okSummary } from "./summaries.ts";

export interface AnthropicCorpusStats {
  agent_requests: number;
  summary_calls: number;
  /** Σ input tokens of answered agent requests (uncached + cache reads + cache writes). */
  prompt_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** cache_read_tokens ÷ prompt_tokens. */
  cached_share: number;
  /** Σ input and output tokens of summary calls. */
  summary_tokens: number;
  /** As Anthropic bills input: uncached × 1 + reads × 0.1 + writes × 1.25, plus summary tokens. */
  cost_weighted_input: number;
  /** The largest agent request against the window. */
  max_request_share: number;
  failed: number;
  /** Answered agent requests with more than four breakpoints (the API refuses them; must be 0). */
  over_breakpoints: number;
}

export interface AnthropicCorpusServer extends AsyncDisposable {
  readonly url: string;
  stats(): AnthropicCorpusStats;
  close(): Promise<void>;
}

export async function startAnthropicCorpusServer(options: {
  corpus: Corpus;
  window: number;
  summaryModel?: string;
  /** Smallest prefix the cache keeps (default 1024 tokens, the API's minimum for Sonnet and Opus). */
  minCacheTokens?: number;
}): Promise<AnthropicCorpusServer> {
  const summaryModel = options.summaryModel ?? "summary-model";
  const summaries = new Set<WireBody>();
  const respond = (body: WireBody): ScriptEntry => {
    if (body.model === summaryModel || !body.tools?.length) {
      summaries.add(body);
      return { content: okSummary(textOf(body)) };
    }
    const place = placeOf(body);
    if (!place) return { error: { status: 500, message: "corpus server: cannot place the request" } };
    const reply = options.corpus.reply(place.turn, place.step);
    return reply.kind === "tool"
      ? { tool_calls: [{ id: reply.id, name: reply.name, arguments: reply.arguments }] }
      : { content: reply.content };
  };
  const server = await startAnthropicServer({
    respond,
    maxInputTokens: options.window,
    minCacheTokens: options.minCacheTokens ?? 1024,
  });
  const stats = (): AnthropicCorpusStats => {
    const answered = server.records.filter((r) => r.status === 200 && r.cache);
    const agent = answered.filter((r) => !summaries.has(r.body));
    const summary = answered.filter((r) => summaries.has(r.body));
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const prompt = sum(agent.map((r) => r.cache!.total_tokens));
    const read = sum(agent.map((r) => r.cache!.cache_read_input_tokens));
    const write = sum(agent.map((r) => r.cache!.cache_creation_input_tokens));
    const summaryTokens = sum(summary.map((r) => r.cache!.total_tokens + 300));
    return {
      agent_requests: server.records.filter((r) => !summaries.has(r.body)).length,
      summary_calls: summaries.size,
      prompt_tokens: prompt,
      cache_read_tokens: read,
      cache_write_tokens: write,
      cached_share: prompt === 0 ? 0 : read / prompt,
      summary_tokens: summaryTokens,
      cost_weighted_input: prompt - read - write + 0.1 * read + 1.25 * write + summaryTokens,
      max_request_share: Math.max(0, ...agent.map((r) => r.cache!.total_tokens / options.window)),
      failed: server.records.filter((r) => r.status !== 200).length,
      over_breakpoints: agent.filter((r) => r.cache!.breakpoints.length > 4).length,
    };
  };
  return {
    url: server.url,
    stats,
    close: () => server.close(),
    [Symbol.asyncDispose]: () => server.close(),
  };
}

type Block = { type: string } & Record<string, unknown>;

function textOf(body: WireBody): string {
  const parts: string[] = [];
  for (const m of body.messages ?? []) {
    for (
      const b of (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content) as Block[]
    ) {
      if (typeof b.text === "string") parts.push(b.text);
      if (typeof b.content === "string") parts.push(b.content);
    }
  }
  return parts.join("\n");
}

/** Which corpus turn and step a request asks for, from its last message. */
function placeOf(body: WireBody): { turn: number; step: number } | null {
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  if (!last || last.role !== "user") return null;
  const blocks =
    (typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content) as Block[];
  const text = blocks.filter((b) => b.type === "text").map((b) => String(b.text)).join("\n");
  if (!blocks.some((b) => b.type === "tool_result")) {
    const turn = turnsMentioned(text).at(-1);
    return turn === undefined ? null : { turn, step: 0 };
  }
  for (let i = messages.length - 2; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    const call = (m.content as Block[]).findLast((b) => b.type === "tool_use");
    if (!call) continue;
    const placed = parseCallId(String(call.id));
    return placed ? { turn: placed.turn, step: placed.step + 1 } : null;
  }
  return null;
}
