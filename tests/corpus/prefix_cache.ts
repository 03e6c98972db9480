/**
 * A simulated provider prefix cache, as OpenAI, Anthropic and DeepSeek bill it: a request's cached tokens are
 * the longest prefix it shares with any of the previous `depth` requests (default 8) to the same model.
 * A request is compared as the model reads it: the tool definitions, then each message (role, content, tool
 * calls, tool call id) in order; whole segments are compared first, then characters inside the first one
 * that differs. Tokens are chars/4 of the characters the server's estimate counts (tests/corpus/server.ts),
 * so `cached = floor(shared chars / 4)`.
 */
import { type ChatRequestBody, textOf } from "../_testing/openai_server.ts";

export interface CacheReading {
  /** Characters of the request as compared. */
  chars: number;
  /** Characters of its longest prefix shared with one of the previous requests. */
  sharedChars: number;
}

export class PrefixCache {
  readonly depth: number;
  #recent = new Map<string, Segment[][]>();

  constructor(depth = 8) {
    this.depth = depth;
  }

  /** How much of `body` the cache holds; `remember` (default true) then adds it to its model's history. */
  read(body: ChatRequestBody, options: { remember?: boolean } = {}): CacheReading {
    const segments = segmentsOf(body);
    const model = body.model ?? "";
    const recent = this.#recent.get(model) ?? [];
    let shared = 0;
    for (const previous of recent) shared = Math.max(shared, sharedPrefix(segments, previous));
    if (options.remember ?? true) {
      recent.push(segments);
      if (recent.length > this.depth) recent.shift();
      this.#recent.set(model, recent);
    }
    return { chars: segments.reduce((n, s) => n + s.text.length, 0), sharedChars: shared };
  }
}

/** Cached tokens of a request of `promptTokens` tokens: chars/4 of the shared prefix. */
export function cachedTokens(promptTokens: number, reading: CacheReading): number {
  return Math.min(promptTokens, Math.floor(reading.sharedChars / 4));
}

/**
 * One part of a request as the model reads it: `text` is what the token estimate counts (content, tool
 * call names and arguments; the tool definitions' JSON), `key` what else must match for it to be shared
 * (role, tool call ids).
 */
export interface Segment {
  key: string;
  text: string;
}

/** The request as the model reads it: the tool definitions, then one segment per message. */
export function segmentsOf(body: ChatRequestBody): Segment[] {
  const segments: Segment[] = [{ key: "tools", text: body.tools?.length ? JSON.stringify(body.tools) : "" }];
  for (const m of body.messages ?? []) segments.push(messageSegment(m));
  return segments;
}

export function messageSegment(m: NonNullable<ChatRequestBody["messages"]>[number]): Segment {
  let text = textOf(m.content);
  const ids: string[] = [];
  for (
    const call of (m.tool_calls ?? []) as { id?: string; function?: { name?: string; arguments?: string } }[]
  ) {
    ids.push(call.id ?? "");
    text += (call.function?.name ?? "") + (call.function?.arguments ?? "");
  }
  return { key: `${m.role} ${m.tool_call_id ?? ""} ${ids.join(",")}`, text };
}

function sharedPrefix(a: readonly Segment[], b: readonly Segment[]): number {
  let shared = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.key !== y.key) return shared;
    if (x.text === y.text) {
      shared += x.text.length;
      continue;
    }
    const n = Math.min(x.text.length, y.text.length);
    let j = 0;
    while (j < n && x.text.charCodeAt(j) === y.text.charCodeAt(j)) j++;
    return shared + j;
  }
  return shared;
}
