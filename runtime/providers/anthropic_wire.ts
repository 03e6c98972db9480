/**
 * Hermes messages ⇄ the Anthropic Messages API's JSON, without the SDK (pure, so it is tested on its own and
 * the request is byte-stable between calls: the same transcript always gives the same body).
 *
 * Prompt caching: Anthropic caches nothing unless a block carries `cache_control`, and a request may carry at
 * most four. They go where a prefix stays the same from one request to the next:
 *
 * 1. the end of the system prompt (or of the tools when there is none): tools and system, cached together;
 * 2. the end of the first user message, the head that compaction never rewrites, so the first request after a
 *    compaction still reads tools, system and head from the cache;
 * 3. the end of the previous request (the last block before the newest assistant message), where the cache was
 *    written last time: an exact hit however many blocks the newest round added;
 * 4. the end of the request (the moving end), written for the next request to read.
 */
import type { Message, ReasoningBlock, ToolCall, Usage } from "../core/types.ts";
import type { ModelRequest, ModelResponse, OutputSchema } from "./provider.ts";

export const CACHE_CONTROL = { type: "ephemeral" } as const;
export const MAX_BREAKPOINTS = 4;

export type CacheControl = typeof CACHE_CONTROL;

export type ContentBlock =
  | { type: "text"; text: string; cache_control?: CacheControl }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string; cache_control?: CacheControl }
  | AnthropicReasoning;

/** The reasoning blocks this API signs and takes back. */
type AnthropicReasoning = Extract<ReasoningBlock, { type: "thinking" | "redacted_thinking" }>;

export interface WireMessage {
  role: "user" | "assistant";
  content: ContentBlock[];
}

export interface WireTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
}

export interface WireRequest {
  model: string;
  max_tokens: number;
  messages: WireMessage[];
  system?: { type: "text"; text: string; cache_control?: CacheControl }[];
  tools?: WireTool[];
  tool_choice?: { type: "auto" | "any" } | { type: "tool"; name: string };
  thinking?: { type: "enabled"; budget_tokens: number };
}

/** What the API answers (non-streaming), and what a stream adds up to. */
export interface WireResponse {
  id?: string;
  content: ({ type: string } & Record<string, unknown>)[];
  stop_reason: string | null;
  usage?: WireUsage | null;
}

export interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

export interface WireOptions {
  /** `max_tokens` when the request names none (the API requires one). */
  defaultMaxTokens: number;
  /** Extended thinking: the budget of reasoning tokens per reply. */
  thinking?: { budget_tokens: number };
  /** Place `cache_control` breakpoints (default true). */
  cache?: boolean;
}

/** Text sent where the API rejects an empty text block (an empty user turn, an answer that said nothing). */
const EMPTY_TEXT = "(empty)";

export function toWireRequest(request: ModelRequest, options: WireOptions): WireRequest {
  const systemTexts: string[] = [];
  let start = 0;
  while (request.messages[start]?.role === "system") systemTexts.push(request.messages[start++]!.content);
  const messages = toWireMessages(request.messages.slice(start));
  const tools: WireTool[] = request.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters,
  }));
  const output = request.output_schema ? outputTool(request.output_schema) : null;
  if (output) tools.push(output.tool);
  // With thinking on, the API wants a tool round's assistant message to start with its thinking block. One
  // left out because it held a secret (redact.ts: rewritten, its signature would not verify) leaves that
  // round without: thinking is off until the round ends, which the API allows between any two requests.
  const thinking = options.thinking !== undefined && !roundWithoutThinking(messages);
  const maxTokens = request.max_tokens ??
    (options.thinking ? options.thinking.budget_tokens + options.defaultMaxTokens : options.defaultMaxTokens);
  const body: WireRequest = { model: request.model, max_tokens: maxTokens, messages };
  const system = systemTexts.filter((t) => t !== "").join("\n\n");
  if (system) body.system = [{ type: "text", text: system }];
  if (tools.length) body.tools = tools;
  if (output) {
    // With thinking the API takes only `auto`; otherwise the model must answer through the output tool, or,
    // when it has other tools, through one of them until it answers.
    body.tool_choice = thinking
      ? { type: "auto" }
      : request.tools.length
      ? { type: "any" }
      : { type: "tool", name: output.tool.name };
  }
  if (thinking) body.thinking = { type: "enabled", budget_tokens: options.thinking!.budget_tokens };
  // No temperature: API version 2026-10-21, the SDK's, removed the sampling parameters.
  if (options.cache ?? true) placeBreakpoints(body);
  return body;
}

/** True when the request continues a tool round whose assistant message has no thinking block. */
function roundWithoutThinking(messages: readonly WireMessage[]): boolean {
  const [assistant, results] = messages.slice(-2);
  if (assistant?.role !== "assistant" || results?.content[0]?.type !== "tool_result") return false;
  const first = assistant.content[0]?.type;
  return first !== "thinking" && first !== "redacted_thinking";
}

/** The Hermes transcript as Anthropic turns: tool results are user blocks, neighbours of one role joined. */
export function toWireMessages(messages: readonly Message[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = toBlocks(message);
    const last = out.at(-1);
    if (last?.role === role) {
      // Tool results come first in a user turn (the API requires it); text after them stays after them.
      last.content.push(...blocks);
    } else {
      out.push({ role, content: blocks });
    }
  }
  if (out[0]?.role === "assistant") {
    out.unshift({ role: "user", content: [{ type: "text", text: EMPTY_TEXT }] });
  }
  for (const m of out) if (m.content.length === 0) m.content.push({ type: "text", text: EMPTY_TEXT });
  return out;
}

function toBlocks(message: Message): ContentBlock[] {
  switch (message.role) {
    case "tool":
      return [{ type: "tool_result", tool_use_id: message.tool_call_id ?? "", content: message.content }];
    case "assistant": {
      // Only Anthropic's own blocks: an OpenAI reasoning item (a session resumed on another provider) means
      // nothing to this API.
      const blocks: ContentBlock[] = (message.reasoning ?? []).filter((block): block is AnthropicReasoning =>
        block.type === "thinking" || block.type === "redacted_thinking"
      );
      if (message.content !== "") blocks.push({ type: "text", text: message.content });
      for (const call of message.tool_calls ?? []) {
        blocks.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call) });
      }
      return blocks;
    }
    default:
      // A system message after the first turns (rare) is read as user text: the API has one system prompt.
      return message.content === "" ? [] : [{ type: "text", text: message.content }];
  }
}

/** The arguments as the object the API expects; text that is not a JSON object is passed under `input`. */
function toolInput(call: ToolCall): unknown {
  if (call.arguments.trim() === "") return {};
  try {
    const parsed = JSON.parse(call.arguments);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch {
    // fall through
  }
  return { input: call.arguments };
}

/** The four breakpoints of the module comment, each at most once, never on a thinking block. */
function placeBreakpoints(body: WireRequest): void {
  const marked = new Set<object>();
  const mark = (block: { cache_control?: CacheControl } | undefined) => {
    if (!block || marked.has(block) || marked.size >= MAX_BREAKPOINTS) return;
    block.cache_control = CACHE_CONTROL;
    marked.add(block);
  };
  mark(body.system?.at(-1) ?? body.tools?.at(-1));
  const messages = body.messages;
  const lastCacheable = (m: WireMessage | undefined) =>
    m?.content.findLast((b) => b.type === "text" || b.type === "tool_result") as
      | { cache_control?: CacheControl }
      | undefined;
  mark(lastCacheable(messages.find((m) => m.role === "user")));
  const newestAssistant = messages.findLastIndex((m) => m.role === "assistant");
  if (newestAssistant > 0) mark(lastCacheable(messages[newestAssistant - 1]));
  mark(lastCacheable(messages.at(-1)));
}

/** Tool names the API accepts. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const DEFAULT_OUTPUT_TOOL = "final_answer";

/**
 * `output.schema` as a tool the model answers through. The API wants an object schema for tool input: any
 * other schema is wrapped as `{value: schema}` and unwrapped from the answer.
 */
export function outputTool(output: OutputSchema): { tool: WireTool; wrapped: boolean } {
  const name = TOOL_NAME.test(output.name) ? output.name : DEFAULT_OUTPUT_TOOL;
  const wrapped = output.schema.type !== "object";
  const input_schema = wrapped
    ? { type: "object", properties: { value: output.schema }, required: ["value"] }
    : output.schema;
  return {
    tool: {
      name,
      description:
        "Give the final answer: call this once, when the task is done, with the answer as its input.",
      input_schema,
    },
    wrapped,
  };
}

/** The reply as Hermes takes it: text, tool calls, signed reasoning, a finish reason in Hermes' terms. */
export function fromWireResponse(response: WireResponse, request: ModelRequest): ModelResponse {
  let content = "";
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningBlock[] = [];
  const output = request.output_schema ? outputTool(request.output_schema) : null;
  let answered: string | null = null;
  for (const block of response.content) {
    if (block.type === "text") content += String(block.text ?? "");
    else if (block.type === "thinking") {
      reasoning.push({
        type: "thinking",
        thinking: String(block.thinking ?? ""),
        signature: String(block.signature ?? ""),
      });
    } else if (block.type === "redacted_thinking") {
      reasoning.push({ type: "redacted_thinking", data: String(block.data ?? "") });
    } else if (block.type === "tool_use") {
      const input = block.input ?? {};
      if (output && block.name === output.tool.name) {
        const value = output.wrapped ? (input as { value?: unknown }).value : input;
        answered = JSON.stringify(value ?? null);
      } else {
        toolCalls.push({ id: String(block.id), name: String(block.name), arguments: JSON.stringify(input) });
      }
    }
  }
  const message: Message = answered !== null
    // The structured answer is the final text; calls made beside it are not run.
    ? { role: "assistant", content: answered }
    : { role: "assistant", content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
  if (reasoning.length) message.reasoning = reasoning;
  return {
    message,
    usage: usageOf(response.usage),
    finish_reason: answered !== null ? "stop" : finishReason(response.stop_reason, toolCalls.length > 0),
  };
}

/**
 * Anthropic's stop reasons in the vocabulary the rest of Hermes reads (`length` and `content_filter` end a
 * run `output_truncated` and `content_filtered`).
 */
export function finishReason(stop: string | null, calledTools: boolean): string {
  switch (stop) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      return calledTools ? "tool_calls" : "stop";
  }
}

/** Anthropic counts uncached, cache-read and cache-written input apart; Hermes' prompt_tokens is their sum. */
export function usageOf(usage: WireUsage | null | undefined): Usage | null {
  if (!usage) return null;
  const read = usage.cache_read_input_tokens ?? 0;
  const write = usage.cache_creation_input_tokens ?? 0;
  return {
    prompt_tokens: (usage.input_tokens ?? 0) + read + write,
    completion_tokens: usage.output_tokens ?? 0,
    cached_tokens: read,
    // Like cached_tokens elsewhere: left out when there is none to report.
    ...(write > 0 ? { cache_write_tokens: write } : {}),
  };
}
