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
 *
 * The model's text is data, so this is a prompt-injection boundary (docs/providers.md): a file the agent read,
 * a fetched page or a tool's output can hold a call block, and a model that quotes it must not run it. Calls
 * count only as the end of the answer (tagged blocks with nothing but whitespace after them, or an answer
 * that is nothing else), and never when a call also appears in the request's own input (a tool result, the
 * prompt, the system message): that call was copied, not chosen. Either way the text stays the answer.
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

/**
 * The calls written at the end of `text`, with the text before them; null when it holds none, an unknown one,
 * a block followed by more text, or (given `inputs`, the request's non-model text) a call copied from them.
 */
export function parseTextToolCalls(
  text: string,
  tools: readonly ToolSpec[],
  inputs: readonly string[] = [],
): Parsed | null {
  const known = new Set(tools.map((t) => t.name));
  const parsed = writtenCalls(text, known);
  if (!parsed || parsed.bodies.some((body) => quotedIn(body, inputs))) return null;
  return { content: parsed.content, calls: parsed.calls };
}

function writtenCalls(text: string, known: ReadonlySet<string>): (Parsed & { bodies: string[] }) | null {
  const tagged = [...text.matchAll(TAGGED)];
  if (tagged.length) {
    // The blocks must end the answer, with only whitespace between them: a block with text after it is
    // quoted or shown, not called.
    const ends = tagged.map((_m, i) => tagged[i + 1]?.index ?? text.length);
    if (tagged.some((m, i) => text.slice(m.index + m[0].length, ends[i]).trim() !== "")) return null;
    const bodies = tagged.map((m) => m[1]!);
    const calls = bodies.flatMap((body) => callsOf(body, known) ?? [null]);
    if (calls.some((c) => c === null)) return null;
    return { content: text.slice(0, tagged[0]!.index).trim(), calls: calls as Parsed["calls"], bodies };
  }
  const body = PREFIXED.exec(text)?.[1] ?? FENCED.exec(text)?.[1] ?? text;
  if (!/^\s*[[{]/.test(body)) return null;
  const calls = callsOf(body, known);
  return calls ? { content: "", calls, bodies: [body] } : null;
}

/**
 * Whether the call text `body` also appears in one of `inputs`: verbatim up to whitespace, in a string of an
 * input that is JSON (a tool result wrapping a page or a file), or as the same call written another way.
 */
function quotedIn(body: string, inputs: readonly string[]): boolean {
  const squeezed = squeeze(body);
  const call = canonicalCalls(body);
  for (const input of inputs) {
    for (const text of textsOf(input)) {
      if (squeeze(text).includes(squeezed)) return true;
      if (call && quotedCalls(text).has(call)) return true;
    }
  }
  return false;
}

const squeeze = (text: string) => text.replace(/\s+/g, "");

/** `input`, and when it is JSON, every string in it (where quoted text hides behind escapes). */
function textsOf(input: string): string[] {
  if (!/^\s*[[{"]/.test(input)) return [input];
  try {
    const strings: string[] = [];
    const walk = (value: unknown): void => {
      if (typeof value === "string") strings.push(value);
      else if (Array.isArray(value)) value.forEach(walk);
      else if (typeof value === "object" && value !== null) Object.values(value).forEach(walk);
    };
    walk(JSON.parse(input));
    return [input, ...strings];
  } catch {
    return [input];
  }
}

/** The calls of `body` in one spelling (names and sorted arguments), so a reformatted copy still matches. */
function canonicalCalls(body: string): string | null {
  const calls = callsOf(body, null);
  return calls ? JSON.stringify(calls.map((c) => [c.name, sorted(JSON.parse(c.arguments))])) : null;
}

/** Every call spelled out in `text`: its tagged blocks, each line, and the whole text. */
function quotedCalls(text: string): Set<string> {
  const found = new Set<string>();
  const candidates = [...[...text.matchAll(TAGGED)].map((m) => m[1]!), ...text.split("\n"), text];
  for (const candidate of candidates) {
    const body = PREFIXED.exec(candidate)?.[1] ?? FENCED.exec(candidate)?.[1] ?? candidate;
    if (!/^\s*[[{]/.test(body)) continue;
    const call = canonicalCalls(body);
    if (call) found.add(call);
  }
  return found;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value).sort().map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}

/** The calls of one JSON text; null unless every one parses (and, given `known`, names a known tool). */
function callsOf(json: string, known: ReadonlySet<string> | null): Parsed["calls"] | null {
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
    if (!call || (known && !known.has(call.name))) return null;
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
      // What the model was given rather than wrote: a call found there too was copied from it.
      const inputs = request.messages.filter((m) => m.role !== "assistant").map((m) => m.content);
      const parsed = parseTextToolCalls(message.content, request.tools, inputs);
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
  if (provider.close) wrapped.close = provider.close.bind(provider);
  return wrapped;
}
