/**
 * A scripted Anthropic Messages API server for tests and bench/: POST /v1/messages answers from a list of
 * {@linkcode ScriptEntry} (the format of the `scripted` provider), streaming or not, on the wire as the API
 * documents it:
 *
 * - a stream is `message_start`, `ping`, per content block `content_block_start`, deltas (`text_delta`,
 *   `input_json_delta`, `thinking_delta`, `signature_delta`) and `content_block_stop`, then `message_delta`
 *   (stop reason, usage) and `message_stop`; `wire.error_body` sends an `error` event instead of the reply,
 *   `wire.no_done` ends the stream after the blocks;
 * - errors are `{"type":"error","error":{"type","message"}}` with the status's error type (429
 *   `rate_limit_error`, 529 `overloaded_error` …) and `retry-after` when the entry has `retry_after`;
 * - the key (`x-api-key`, or `Authorization: Bearer` as the SDK's 1.x sends it) and `anthropic-version` are
 *   checked (401 and 400 otherwise; version 2026-10-21 rejects `temperature`), so are `max_tokens`, at most four
 *   `cache_control` breakpoints, tool results answering the previous turn's tool_use blocks, and, with
 *   `thinking` on, the budget and the signature of every thinking block sent back (the server signs the
 *   thinking it sends; a tool round must send its thinking back, unchanged);
 * - the prompt cache is emulated by prefix up to each breakpoint (tests/_testing/anthropic_cache.ts) and reported as
 *   `cache_read_input_tokens` / `cache_creation_input_tokens`;
 * - `wire.finish_reason` is sent as the `stop_reason` (`max_tokens`, `refusal`, `pause_turn` …); an entry's
 *   `thinking` becomes a signed thinking block when the request enables thinking.
 */
import { parseDuration } from "../../runtime/core/duration.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { AnthropicCache, blocksOf, type CacheReading } from "./anthropic_cache.ts";
import { sleep } from "./openai_server.ts";

/** The API versions the server speaks: the SDK's 1.x sends the newer (bearer auth, no `temperature`). */
export const ANTHROPIC_VERSIONS = ["2023-06-01", "2026-10-21"];

export type WireBody = Record<string, unknown> & {
  model?: string;
  max_tokens?: number;
  stream?: boolean;
  system?: unknown;
  tools?: { name: string }[];
  messages?: { role: string; content: string | ({ type: string } & Record<string, unknown>)[] }[];
  thinking?: { type: string; budget_tokens?: number };
  tool_choice?: { type: string; name?: string };
};

export interface AnthropicServerOptions {
  script?: ScriptEntry[];
  /** The key `x-api-key` or the bearer token must carry (default: any non-empty key). */
  apiKey?: string;
  /** Streamed text, thinking and tool input come in pieces of at most this many characters (default 4). */
  chunkChars?: number;
  /** Answers a request from what it holds; the script is used when it returns undefined. */
  respond?: (body: WireBody) => ScriptEntry | undefined;
  /** Smallest prefix the cache keeps, in tokens (default 0: every breakpoint; the API's is 1024 and more). */
  minCacheTokens?: number;
  /** Checks the request's auth headers instead of `x-api-key` (Bedrock, Vertex); a string is the 401 message. */
  authorize?: (request: Request, body: string) => string | null | Promise<string | null>;
  /**
   * The model's context window, in the cache's tokens: a larger request is refused with the API's 400
   * "prompt is too long: N tokens > M maximum" (default: none).
   */
  maxInputTokens?: number;
  /**
   * Amazon Bedrock's wire: `POST /model/{id}/invoke` answers JSON, `…/invoke-with-response-stream` the same
   * events as AWS EventStream frames (`chunk` events whose payload is `{"bytes": base64(event JSON)}`).
   */
  bedrock?: boolean;
  /** The route the messages are posted to (default /v1/messages). */
  route?: (method: string, path: string) => boolean;
}

export interface AnthropicRecord {
  url: string;
  body: WireBody;
  headers: Headers;
  status: number;
  /** The cache as this request found it (answered requests only). */
  cache: CacheReading | null;
}

export interface AnthropicServer extends AsyncDisposable {
  /** Base URL without /v1 (the SDK adds it), e.g. http://127.0.0.1:43210. */
  readonly url: string;
  readonly port: number;
  readonly records: readonly AnthropicRecord[];
  readonly remaining: number;
  push(...entries: ScriptEntry[]): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

export function anthropicError(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
  return Response.json({ type: "error", error: { type, message }, request_id: `req_${status}` }, {
    status,
    headers: { "request-id": `req_${status}`, ...headers },
  });
}

/** What the server signs a thinking text with; a changed text or signature fails the check. */
export async function signThinking(thinking: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`hermes-test:${thinking}`));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

export async function startAnthropicServer(
  scriptOrOptions: ScriptEntry[] | AnthropicServerOptions = {},
): Promise<AnthropicServer> {
  const options: AnthropicServerOptions = Array.isArray(scriptOrOptions)
    ? { script: scriptOrOptions }
    : scriptOrOptions;
  const chunkChars = Math.max(1, options.chunkChars ?? 4);
  const script: ScriptEntry[] = [...(options.script ?? [])];
  const used = new Set<number>();
  const records: AnthropicRecord[] = [];
  const cache = new AnthropicCache({ minTokens: options.minCacheTokens ?? 0 });
  const closing = new AbortController();
  let answered = 0;

  const pick = (body: WireBody): ScriptEntry | undefined => {
    const text = lastUserText(body);
    let index = script.findIndex((e, i) => !used.has(i) && e.match !== undefined && text.includes(e.match));
    if (index < 0) index = script.findIndex((e, i) => !used.has(i) && e.match === undefined);
    if (index < 0) return undefined;
    used.add(index);
    return script[index];
  };

  const handler = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    const bedrockStream = options.bedrock === true && path.endsWith("/invoke-with-response-stream");
    const routed = options.route?.(request.method, path) ??
      (options.bedrock
        ? request.method === "POST" && /^\/model\/[^/]+\/invoke(-with-response-stream)?$/.test(path)
        : request.method === "POST" && path === "/v1/messages");
    if (!routed) return anthropicError(404, `Unknown route ${request.method} ${path}`);
    let body: WireBody;
    const raw = await request.text();
    try {
      body = JSON.parse(raw);
    } catch {
      return anthropicError(400, "Request body is not valid JSON");
    }
    const record: AnthropicRecord = {
      url: request.url,
      body,
      headers: request.headers,
      status: 200,
      cache: null,
    };
    records.push(record);
    const fail = (status: number, message: string, headers: Record<string, string> = {}) => {
      record.status = status;
      return anthropicError(status, message, headers);
    };
    const key = request.headers.get("x-api-key") ??
      /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const denied = options.authorize
      ? await options.authorize(request, raw)
      : !key || (options.apiKey !== undefined && key !== options.apiKey)
      ? "invalid x-api-key"
      : null;
    if (denied) return fail(401, denied);
    const version = request.headers.get("anthropic-version") ?? "";
    if (!options.authorize && !ANTHROPIC_VERSIONS.includes(version)) {
      return fail(400, `anthropic-version: "${version}" is not a valid version`);
    }
    if (version === "2026-10-21" && body.temperature !== undefined) {
      return fail(400, "temperature: Extra inputs are not permitted");
    }
    const invalid = await invalidRequest(body, { authorized: !!options.authorize });
    if (invalid) return fail(400, invalid);
    if (options.maxInputTokens !== undefined) {
      const tokens = Math.ceil(blocksOf(body).reduce((n, b) => n + b.text.length, 0) / 4);
      if (tokens > options.maxInputTokens) {
        return fail(400, `prompt is too long: ${tokens} tokens > ${options.maxInputTokens} maximum`);
      }
    }
    const entry = options.respond?.(body) ?? pick(body);
    if (!entry) return fail(500, "script exhausted");
    if (entry.delay) {
      const waited = await sleep(parseDuration(entry.delay), closing.signal);
      if (!waited) return new Response(null, { status: 499 });
    }
    if (entry.error) {
      const { status, message, retry_after } = entry.error;
      return fail(status, message, retry_after === undefined ? {} : { "retry-after": String(retry_after) });
    }
    answered++;
    const reading = cache.read(body);
    record.cache = reading;
    const content = await contentOf(entry, body, answered);
    const completion = Math.ceil(JSON.stringify(content).length / 4);
    const given = entry.usage;
    const usage = given?.prompt_tokens === undefined
      ? {
        input_tokens: reading.input_tokens,
        cache_creation_input_tokens: reading.cache_creation_input_tokens,
        cache_read_input_tokens: reading.cache_read_input_tokens,
      }
      : {
        input_tokens: given.prompt_tokens - (given.cached_tokens ?? 0),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: given.cached_tokens ?? 0,
      };
    const outputTokens = given?.completion_tokens ?? completion;
    const stop = entry.wire?.finish_reason ??
      (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
    const id = `msg_${String(answered).padStart(4, "0")}`;
    const message = {
      id,
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { ...usage, output_tokens: outputTokens, service_tier: "standard" },
    };
    if (bedrockStream) {
      const events = streamEvents(message, {
        chunkChars,
        errorBody: entry.wire?.error_body,
        noStop: entry.wire?.no_done,
      });
      return new Response(toBytes(events.map(([, data]) => eventStreamFrame(data))), {
        headers: { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": id },
      });
    }
    if (!body.stream) {
      if (entry.wire?.error_body) return fail(529, "Overloaded");
      return Response.json(message, { headers: { "request-id": `req_${id}` } });
    }
    const events = streamEvents(message, {
      chunkChars,
      errorBody: entry.wire?.error_body,
      noStop: entry.wire?.no_done,
    });
    return new Response(
      toBytes(events.map(([type, data]) => new TextEncoder().encode(`event: ${type}\ndata: ${data}\n\n`))),
      { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": id } },
    );
  };

  const { promise: listening, resolve: onListening } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: onListening }, handler);
  const address = await listening;
  const close = () => {
    closing.abort();
    return server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    records,
    get remaining() {
      return script.length - used.size;
    },
    push(...entries) {
      script.push(...entries);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

type Block = { type: string } & Record<string, unknown>;

async function contentOf(entry: ScriptEntry, body: WireBody, n: number): Promise<Block[]> {
  const blocks: Block[] = [];
  if (entry.thinking !== undefined && body.thinking?.type === "enabled") {
    blocks.push({
      type: "thinking",
      thinking: entry.thinking,
      signature: await signThinking(entry.thinking),
    });
  }
  if (entry.content) blocks.push({ type: "text", text: entry.content, citations: null });
  for (const [i, call] of (entry.tool_calls ?? []).entries()) {
    const input = typeof call.arguments === "string"
      ? JSON.parse(call.arguments || "{}")
      : call.arguments ?? {};
    blocks.push({ type: "tool_use", id: call.id ?? `toolu_${n}_${i + 1}`, name: call.name, input });
  }
  return blocks;
}

/** The documented SSE sequence for `message`: each event's type and its JSON. */
function streamEvents(
  message:
    & { content: Block[]; stop_reason: string; usage: Record<string, unknown> }
    & Record<string, unknown>,
  options: {
    chunkChars: number;
    errorBody?: Record<string, unknown> | undefined;
    noStop?: boolean | undefined;
  },
): [string, string][] {
  const events: [string, string][] = [];
  const send = (type: string, data: Record<string, unknown>) =>
    events.push([type, JSON.stringify({ type, ...data })]);
  const pieces = (text: string) => {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += options.chunkChars) out.push(text.slice(i, i + options.chunkChars));
    return out;
  };
  const { content, stop_reason, usage, ...rest } = message;
  send("message_start", {
    message: {
      ...rest,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  send("ping", {});
  if (options.errorBody) {
    send("error", { error: options.errorBody });
    return events;
  }
  for (const [index, block] of content.entries()) {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of pieces(String(block.text))) {
        send("content_block_delta", { index, delta: { type: "text_delta", text } });
      }
    } else if (block.type === "thinking") {
      send("content_block_start", {
        index,
        content_block: { type: "thinking", thinking: "", signature: "" },
      });
      for (const thinking of pieces(String(block.thinking))) {
        send("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
      }
      send("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "tool_use") {
      send("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      for (const partial_json of pieces(JSON.stringify(block.input))) {
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
      }
    }
    send("content_block_stop", { index });
  }
  if (!options.noStop) {
    send("message_delta", {
      delta: { stop_reason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send("message_stop", {});
  }
  return events;
}

function toBytes(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

/**
 * One AWS EventStream message carrying a Bedrock `chunk` event: prelude (total and headers length, CRC32),
 * string headers, the payload `{"bytes": base64(json)}`, and the CRC32 of all that.
 */
export function eventStreamFrame(json: string): Uint8Array {
  const encoder = new TextEncoder();
  const headers: number[] = [];
  for (
    const [name, value] of [[":event-type", "chunk"], [":content-type", "application/json"], [
      ":message-type",
      "event",
    ]]
  ) {
    const n = encoder.encode(name);
    const v = encoder.encode(value);
    headers.push(n.length, ...n, 7, v.length >> 8, v.length & 0xff, ...v);
  }
  const bytes = btoa(String.fromCharCode(...encoder.encode(json)));
  const payload = encoder.encode(JSON.stringify({ bytes }));
  const total = 12 + headers.length + payload.length + 4;
  const frame = new Uint8Array(total);
  const view = new DataView(frame.buffer);
  view.setUint32(0, total);
  view.setUint32(4, headers.length);
  view.setUint32(8, crc32(frame.subarray(0, 8)));
  frame.set(headers, 12);
  frame.set(payload, 12 + headers.length);
  view.setUint32(total - 4, crc32(frame.subarray(0, total - 4)));
  return frame;
}

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** The text of the last user turn (its text blocks; tool results are not the user speaking). */
export function lastUserText(body: WireBody): string {
  for (const message of [...(body.messages ?? [])].reverse()) {
    if (message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    const texts = message.content.filter((b) => b.type === "text").map((b) => String(b.text));
    if (texts.length) return texts.join("\n");
  }
  return "";
}

/** The 400 message the API gives a malformed request, or null. */
async function invalidRequest(body: WireBody, context: { authorized: boolean }): Promise<string | null> {
  if (!context.authorized && typeof body.model !== "string") return "model: Field required";
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required";
  const messages = body.messages ?? [];
  if (messages.length === 0) return "messages: at least one message is required";
  if (messages[0]!.role !== "user") return 'messages: first message must use the "user" role';
  const breakpoints = JSON.stringify([body.tools, body.system, messages]).split('"cache_control"').length - 1;
  if (breakpoints > 4) {
    return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
  }
  const thinking = body.thinking?.type === "enabled";
  if (thinking) {
    const budget = body.thinking?.budget_tokens ?? 0;
    if (budget < 1024) return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (budget >= body.max_tokens) return "`max_tokens` must be greater than `thinking.budget_tokens`";
    if (body.temperature !== undefined && body.temperature !== 1) {
      return "`temperature` may only be set to 1 when thinking is enabled";
    }
    if (body.tool_choice && !["auto", "none"].includes(body.tool_choice.type)) {
      return "Thinking may not be enabled when tool_choice forces tool use.";
    }
  }
  let open: string[] = [];
  for (const [i, message] of messages.entries()) {
    const blocks = typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content;
    if (blocks.length === 0) return `messages.${i}: all messages must have non-empty content`;
    for (const [j, block] of blocks.entries()) {
      if (block.type === "text" && block.text === "") {
        return `messages.${i}.content.${j}: text content blocks must be non-empty`;
      }
      if (
        block.type === "thinking" &&
        (block.cache_control || block.signature !== await signThinking(String(block.thinking)))
      ) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
    }
    if (message.role === "user") {
      const results = blocks.filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id));
      const unexpected = results.filter((id) => !open.includes(id));
      if (unexpected.length) {
        return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${
          unexpected[0]
        }`;
      }
      const missing = open.filter((id) => !results.includes(id));
      if (missing.length) {
        return `messages.${
          i - 1
        }: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing[0]}`;
      }
      const firstOther = blocks.findIndex((b) => b.type !== "tool_result");
      if (firstOther >= 0 && blocks.slice(firstOther).some((b) => b.type === "tool_result")) {
        return `messages.${i}.content: tool_result blocks must come first in a user message`;
      }
      open = [];
    } else {
      open = blocks.filter((b) => b.type === "tool_use").map((b) => String(b.id));
      const inToolLoop = i === messages.length - 2 && open.length > 0;
      if (
        thinking && inToolLoop && blocks[0]?.type !== "thinking" && blocks[0]?.type !== "redacted_thinking"
      ) {
        return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found ` +
          `\`${blocks[0]?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start ` +
          `with a thinking block`;
      }
    }
  }
  if (open.length) return `messages: the last assistant message's tool_use blocks have no tool_result`;
  return null;
}

if (import.meta.main) {
  const path = Deno.args[0];
  if (!path) {
    console.error("usage: deno run -A tests/_testing/anthropic_server.ts REPLIES.yaml");
    Deno.exit(2);
  }
  const { loadScript } = await import("../../runtime/providers/scripted.ts");
  const server = await startAnthropicServer({ script: loadScript(path) });
  console.log(server.url);
}
