/**
 * What a recorded model request keeps, and how a replay finds where a new request departs from it. Tool-call
 * ids are the provider's inventions (`call_8fK2…`, `toolu_01…`): a request keeps them as `call_1`, `call_2`,
 * … in order of first appearance, so two runs that asked the same things compare equal. Everything else a
 * request carries is the job's and the transcript's own and is kept as it is.
 */
import type { Message, ReasoningBlock, ToolSpec } from "../core/types.ts";
import type { ModelRequest, OutputSchema } from "../providers/provider.ts";
import { stableJson } from "./cassette.ts";

export interface NormalRequest {
  model: string;
  messages: NormalMessage[];
  tools: ToolSpec[];
  max_tokens?: number;
  temperature?: number;
  output_schema?: OutputSchema;
}

export interface NormalMessage {
  role: Message["role"];
  content: string;
  tool_calls?: { id: string; name: string; arguments: string }[];
  tool_call_id?: string;
  name?: string;
  reasoning?: ReasoningBlock[];
}

export function normaliseRequest(request: ModelRequest): NormalRequest {
  const ids = new Map<string, string>();
  const idOf = (id: string) => {
    let normal = ids.get(id);
    if (normal === undefined) ids.set(id, normal = `call_${ids.size + 1}`);
    return normal;
  };
  const messages = request.messages.map((m): NormalMessage => ({
    role: m.role,
    content: m.content,
    ...(m.tool_calls?.length
      ? { tool_calls: m.tool_calls.map((c) => ({ id: idOf(c.id), name: c.name, arguments: c.arguments })) }
      : {}),
    ...(m.tool_call_id !== undefined ? { tool_call_id: idOf(m.tool_call_id) } : {}),
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.reasoning?.length ? { reasoning: m.reasoning } : {}),
  }));
  return {
    model: request.model,
    messages,
    tools: request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.output_schema !== undefined ? { output_schema: request.output_schema } : {}),
  };
}

/** Where two normalised requests first differ, in words; null when they are the same. */
export function firstDifference(recorded: NormalRequest, now: NormalRequest): string | null {
  if (recorded.model !== now.model) return `model: recorded ${show(recorded.model)}, now ${show(now.model)}`;
  const count = Math.max(recorded.messages.length, now.messages.length);
  for (let i = 0; i < count; i++) {
    const a = recorded.messages[i];
    const b = now.messages[i];
    if (!a || !b) {
      const which = a ? `recorded has message ${i + 1} (${a.role}), now there is none` : `now there is a ` +
        `message ${i + 1} (${b!.role}) the recording did not have: ${show(b!.content)}`;
      return `messages: ${recorded.messages.length} recorded, ${now.messages.length} now: ${which}`;
    }
    for (const field of ["role", "content", "tool_calls", "tool_call_id", "name", "reasoning"] as const) {
      if (stableJson(a[field]) !== stableJson(b[field])) {
        return `message ${i + 1} (${a.role}) ${field}: recorded ${showField(a[field], b[field])}, now ` +
          showField(b[field], a[field]);
      }
    }
  }
  const tools = Math.max(recorded.tools.length, now.tools.length);
  for (let i = 0; i < tools; i++) {
    const a = recorded.tools[i];
    const b = now.tools[i];
    if (stableJson(a) !== stableJson(b)) {
      const field = !a || !b || a.name !== b.name
        ? "name"
        : a.description !== b.description
        ? "description"
        : "parameters";
      return `tool ${i + 1} ${field}: recorded ${show(a?.[field])}, now ${show(b?.[field])}`;
    }
  }
  for (const field of ["max_tokens", "temperature", "output_schema"] as const) {
    if (stableJson(recorded[field]) !== stableJson(now[field])) {
      return `${field}: recorded ${show(recorded[field])}, now ${show(now[field])}`;
    }
  }
  return null;
}

const SHOWN = 120;

/** A value for a one-line message: JSON, long text cut around where it departs from `other`. */
function showField(value: unknown, other: unknown): string {
  if (typeof value !== "string" || typeof other !== "string") return show(value);
  let at = 0;
  while (at < value.length && value[at] === other[at]) at++;
  const start = Math.max(0, at - SHOWN / 2);
  const cut = value.slice(start, start + SHOWN);
  return `${start > 0 ? "…" : ""}${JSON.stringify(cut)}${start + SHOWN < value.length ? "…" : ""}`;
}

function show(value: unknown): string {
  if (value === undefined) return "(none)";
  const text = typeof value === "string" ? JSON.stringify(value) : stableJson(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}
