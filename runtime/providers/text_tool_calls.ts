/**
 * Tool calls that a model wrote into its answer's text instead of the API's `tool_calls` field, as local
 * models served without a tool-call parser do (`model.text_tool_calls: true`). Recognised forms:
 *
 * - `<tool_call>{"name": …, "arguments": {…}}</tool_call>` blocks (Hermes, Qwen), one or more;
 * - `<|python_tag|>{"name": …, "parameters": {…}}` (Llama 3.1) and `[TOOL_CALLS] [{…}, …]` (Mistral);
 * - an answer that is nothing but such a JSON object or an array of them, bare or in a ```json fence,
 *   including the `{"function": {"name", "arguments"}}` and `{"tool": …, "parameters": …}` spellings.
 *
 * Only calls naming a tool of the request count, and only when every call of the answer parses: prose that
 * merely shows JSON, or names an unknown tool, stays the answer.
 */
import type { Message, ToolCall, ToolSpec } from "../core/types.ts";
import type { CompleteOptions, ModelRequest, ModelResponse, Provider } from "./provider.ts";

interface Parsed {
  content: string;
  calls: { name: string; arguments: string }[];
}

const TAGGED = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;
const PREFIXED = /^\s*(?:<\|python_tag\|>|\[TOOL_CALLS\])\s*([\s\S]+?)\s*(?:<\|eom_id\|>|<\|eot_id\|>)?\s*$/;
const FENCED = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/;

/** The calls written in `text`, with the text left around them; null when it holds none (or an unknown one). */
export function parseTextToolCalls(text: string, tools: readonly ToolSpec[]): Parsed | null {
  const known = new Set(tools.map((t) => t.name));
  const tagged = [...text.matchAll(TAGGED)];
  if (tagged.length) {
    const calls = tagged.flatMap((m) => callsOf(m[1]!, known) ?? [null]);
    if (calls.some((c) => c === null)) return null;
    return { content: text.replace(TAGGED, "").trim(), calls: calls as Parsed["calls"] };
  }
  const body = PREFIXED.exec(text)?.[1] ?? FENCED.exec(text)?.[1] ?? text;
  if (!/^\s*[[{]/.test(body)) return null;
  const calls = callsOf(body, known);
  return calls ? { content: "", calls } : null;
}

function callsOf(json: string, known: ReadonlySet<string>): Parsed["calls"] | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return null;
  const calls: Parsed["calls"] = [];
  for (const item of items) {
    const call = callOf(item);
    if (!call || !known.has(call.name)) return null;
    calls.push(call);
  }
  return calls;
}

function callOf(item: unknown): { name: string; arguments: string } | null {
  if (typeof item !== "object" || item === null) return null;
  const record = item as Record<string, unknown>;
  const fn = typeof record.function === "object" && record.function !== null
    ? record.function as Record<string, unknown>
    : record;
  const name = fn.name ?? fn.tool ?? record.tool;
  if (typeof name !== "string") return null;
  const args = fn.arguments ?? fn.parameters ?? fn.args ?? {};
  if (typeof args === "string") {
    try {
      const parsed = JSON.parse(args);
      return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
        ? { name, arguments: args }
        : null;
    } catch {
      return null;
    }
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  return { name, arguments: JSON.stringify(args) };
}

/** `provider`, with text-written tool calls of its answers turned into real ones. */
export function withTextToolCalls(provider: Provider): Provider {
  const wrapped: Provider = {
    name: provider.name,
    async complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelResponse> {
      const response = await provider.complete(request, options);
      const { message } = response;
      if (message.tool_calls?.length || !message.content || !request.tools.length) return response;
      const parsed = parseTextToolCalls(message.content, request.tools);
      if (!parsed) return response;
      const tool_calls: ToolCall[] = parsed.calls.map((call) => ({
        // The server gave no ids: ours are unique within the session (and across resumes).
        id: `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
        name: call.name,
        arguments: call.arguments,
      }));
      const rewritten: Message = { ...message, content: parsed.content, tool_calls };
      return { ...response, message: rewritten, finish_reason: "tool_calls" };
    },
  };
  if (provider.serverWindow) wrapped.serverWindow = provider.serverWindow.bind(provider);
  return wrapped;
}
