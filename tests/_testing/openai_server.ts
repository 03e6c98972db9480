/**
 * A scripted OpenAI-compatible HTTP server for tests and demos: POST /v1/chat/completions answers from a
 * list of {@linkcode ScriptEntry} (the same format as the `scripted` provider), streaming or not.
 *
 * Run as a script to serve a reply file: `deno run -A tests/_testing/openai_server.ts replies.yaml` prints the base URL.
 */
import { parseDuration } from "../../runtime/core/duration.ts";
import type { ScriptEntry, WireQuirks } from "../../runtime/providers/script.ts";

/** The parts of a chat completion request body the server reads; everything sent is kept in `requests`. */
export interface ChatRequestBody {
  model?: string;
  messages?: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: unknown[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  temperature?: number;
  [field: string]: unknown;
}

export interface OpenAIServerOptions {
  script?: ScriptEntry[];
  /** When set, requests must carry `Authorization: Bearer <apiKey>`; others get a 401. */
  apiKey?: string;
  /** Model id listed by GET /v1/models (default "scripted-model"). */
  model?: string;
  /** Streamed content is sent in pieces of at most this many characters (default 4). */
  chunkChars?: number;
  /**
   * A pause before each streamed chunk: the reply arrives over time, as a model's does, so a client that stops
   * reading part-way (a cost cap) really stops before the end (default none: chunks go as fast as they are read).
   */
  chunkDelayMs?: number;
  /**
   * Awaited before each chat completion is answered (after it is recorded in `requests`): a test holds a
   * model call until it has seen what it waits for.
   */
  gate?: (body: ChatRequestBody) => Promise<void>;
  /**
   * Awaited in the middle of a streamed reply, after half its chunks went out: a test stops the client
   * while a reply is streaming.
   */
  midStream?: (body: ChatRequestBody) => Promise<void>;
  /** Answers a request from what it holds (a model that follows the transcript); the script is used when it returns undefined. */
  respond?: (body: ChatRequestBody) => ScriptEntry | undefined;
  /** What the server says about its context window, on the routes local servers answer (not under /v1). */
  serverInfo?: ServerInfo;
  /**
   * Checks each request body as a server does its parameters: a message refuses the request with HTTP 400
   * (`invalid_request_error`), before the script is consulted. See {@linkcode openAIParameterRules}.
   */
  refuse?: (body: ChatRequestBody) => string | undefined;
  /**
   * Speak Azure OpenAI instead: completions are posted to `/openai/deployments/{deployment}/chat/completions`
   * with `?api-version=` this version and the key in an `api-key` header (no bearer token); anything else is
   * refused as Azure does (404 for another route or version, 401 for another key).
   */
  azure?: { apiKey: string; apiVersion: string };
}

/**
 * What OpenAI's API refuses of a Chat Completions body, as its error messages say: `max_tokens` or a
 * temperature other than 1 for a reasoning model (o-series, gpt-5 family except chat models).
 */
export function openAIParameterRules(body: ChatRequestBody): string | undefined {
  const name = String(body.model ?? "");
  const reasoning = /^o[1-9](-|$)/.test(name) || (/^gpt-5/.test(name) && !name.includes("chat"));
  if (!reasoning) {
    return body.reasoning_effort === undefined
      ? undefined
      : "Unrecognized request argument supplied: reasoning_effort";
  }
  if (body.max_tokens !== undefined) {
    return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
  }
  if (body.temperature !== undefined && body.temperature !== 1) {
    return "Unsupported value: 'temperature' does not support " + body.temperature +
      " with this model. Only the default (1) value is supported.";
  }
  return undefined;
}

/**
 * - `llamaCpp`: `GET /props` answers `{default_generation_settings: {n_ctx}, n_ctx}` as llama.cpp's server;
 * - `ollama`: `POST /api/show` answers `{parameters: "num_ctx N", model_info: {"llama.context_length": M}}`
 *   as Ollama (each part only when given).
 */
export interface ServerInfo {
  llamaCpp?: { n_ctx: number };
  ollama?: { num_ctx?: number; context_length?: number };
  /** Both routes answer nothing until the server closes (a server still loading its model, a wedged proxy). */
  hang?: boolean;
}

/** The routes local servers tell their window on. */
const INFO_ROUTES = new Set(["GET /props", "POST /api/show"]);

/** The response to a local server's info route, or null when `serverInfo` does not serve `path`. */
export function serverInfoResponse(
  info: ServerInfo | undefined,
  method: string,
  path: string,
): Response | null {
  if (info?.llamaCpp && method === "GET" && path === "/props") {
    const { n_ctx } = info.llamaCpp;
    return Response.json({ default_generation_settings: { n_ctx, temperature: 0.8 }, n_ctx, total_slots: 1 });
  }
  if (info?.ollama && method === "POST" && path === "/api/show") {
    const { num_ctx, context_length } = info.ollama;
    return Response.json({
      modelfile: "FROM qwen",
      parameters: [`stop "<|im_end|>"`, ...(num_ctx ? [`num_ctx ${num_ctx}`] : [])].join("\n"),
      details: { family: "llama" },
      model_info: {
        "general.architecture": "llama",
        ...(context_length ? { "llama.context_length": context_length } : {}),
      },
    });
  }
  return null;
}

export interface OpenAIServer {
  /** Base URL ending in /v1, e.g. http://127.0.0.1:43210/v1. */
  readonly url: string;
  readonly port: number;
  /** Every chat completion request body received, in arrival order (including failed ones). */
  readonly requests: ChatRequestBody[];
  /** With `azure`: the path and query of every request, in arrival order. */
  readonly urls: string[];
  /** Every request to a local server's info route (`GET /props`, `POST /api/show`), in arrival order. */
  readonly probes: string[];
  /** Entries not yet used. */
  readonly remaining: number;
  /** Appends entries to the script. */
  push(...entries: ScriptEntry[]): void;
  /** Replaces the script; all new entries are unused. */
  replace(entries: ScriptEntry[]): void;
  /** Stops listening, ends pending delays and waits for open connections to finish. */
  close(): Promise<void>;
}

/** One assistant reply as the server puts it on the wire (see {@linkcode completionResponse}). */
export interface Reply {
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
    completion_tokens_details?: { reasoning_tokens: number };
  };
}

export async function startOpenAIServer(
  scriptOrOptions: ScriptEntry[] | OpenAIServerOptions = {},
): Promise<OpenAIServer> {
  const options: OpenAIServerOptions = Array.isArray(scriptOrOptions)
    ? { script: scriptOrOptions }
    : scriptOrOptions;
  const model = options.model ?? "scripted-model";
  const chunkChars = Math.max(1, options.chunkChars ?? 4);
  let script: ScriptEntry[] = [...(options.script ?? [])];
  let used = new Set<number>();
  let completions = 0;
  const requests: ChatRequestBody[] = [];
  const closing = new AbortController();

  const pick = (body: ChatRequestBody): ScriptEntry | undefined => {
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === "user");
    const text = textOf(lastUser?.content);
    let index = script.findIndex((e, i) => !used.has(i) && e.match !== undefined && text.includes(e.match));
    if (index < 0) index = script.findIndex((e, i) => !used.has(i) && e.match === undefined);
    if (index < 0) return undefined;
    used.add(index);
    return script[index];
  };

  const urls: string[] = [];
  const probes: string[] = [];
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    let path = url.pathname;
    let unauthorized = options.apiKey !== undefined &&
      request.headers.get("authorization") !== `Bearer ${options.apiKey}`;
    if (options.azure) {
      urls.push(`${url.pathname}${url.search}`);
      const deployment = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(path);
      if (!deployment || url.searchParams.get("api-version") !== options.azure.apiVersion) {
        return errorResponse(404, "Resource not found", "invalid_request_error", "404");
      }
      path = "/v1/chat/completions";
      unauthorized = request.headers.get("api-key") !== options.azure.apiKey ||
        request.headers.has("authorization");
    }
    if (INFO_ROUTES.has(`${request.method} ${path}`)) {
      probes.push(`${request.method} ${path}`);
      if (options.serverInfo?.hang) {
        if (!closing.signal.aborted) {
          await new Promise((resolve) => closing.signal.addEventListener("abort", resolve, { once: true }));
        }
        return new Response(null, { status: 503 });
      }
    }
    const info = serverInfoResponse(options.serverInfo, request.method, path);
    if (info) return info;
    if (request.method === "GET" && path === "/v1/models") {
      if (unauthorized) return rejectKey(request);
      return Response.json({
        object: "list",
        data: [{ id: model, object: "model", created: 0, owned_by: "hermes-tests" }],
      });
    }
    if (request.method !== "POST" || path !== "/v1/chat/completions") {
      return errorResponse(
        404,
        `Unknown route ${request.method} ${path}`,
        "invalid_request_error",
        "not_found",
      );
    }
    let body: ChatRequestBody;
    try {
      body = await request.json();
    } catch {
      return errorResponse(400, "Request body is not valid JSON", "invalid_request_error", "invalid_json");
    }
    requests.push(body);
    if (unauthorized) return rejectKey(request);
    const refused = options.refuse?.(body);
    if (refused !== undefined) {
      return errorResponse(400, refused, "invalid_request_error", "unsupported_parameter");
    }
    await options.gate?.(body);
    const entry = options.respond?.(body) ?? pick(body);
    if (!entry) return errorResponse(500, "script exhausted", "server_error", "script_exhausted");
    completions++;
    if (entry.delay) {
      // Not request.signal: Deno 2.9 misses most hang-ups (bodies over ~300 bytes) and warns about legacy
      // aborts; a disconnected client's delay just runs out, and close() ends every pending one.
      const waited = await sleep(parseDuration(entry.delay), closing.signal);
      if (!waited) return new Response(null, { status: 499 });
    }
    if (entry.error) {
      const { status, message, code, retry_after } = entry.error;
      const headers: Record<string, string> = retry_after === undefined
        ? {}
        : { "retry-after": String(retry_after) };
      return errorResponse(
        status,
        message,
        status >= 500 ? "server_error" : "invalid_request_error",
        code,
        headers,
      );
    }
    const wire = entry.wire ?? {};
    if (wire.error_body) {
      const payload = { error: wire.error_body };
      if (!body.stream) return Response.json(payload);
      return new Response(`data: ${JSON.stringify(payload)}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      });
    }
    const reply = buildReply(entry, body, completions);
    return completionResponse(reply, {
      id: `chatcmpl-${completions}`,
      model: body.model ?? model,
      chunkChars,
      chunkDelayMs: options.chunkDelayMs ?? 0,
      body,
      wire,
      ...(options.midStream ? { midStream: () => options.midStream!(body) } : {}),
    });
  };

  const { promise: listening, resolve: onListening } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: onListening }, handler);
  const address = await listening;
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    port: address.port,
    requests,
    urls,
    probes,
    get remaining() {
      return script.length - used.size;
    },
    push(...entries) {
      script.push(...entries);
    },
    replace(entries) {
      script = [...entries];
      used = new Set();
    },
    close() {
      closing.abort();
      return server.shutdown();
    },
  };
}

/**
 * A chat completion answering `body` with `reply`, as OpenAI sends it: an SSE stream when the request asked
 * for one (usage in a last chunk when `stream_options.include_usage`), else one JSON object.
 */
export function completionResponse(
  reply: Reply,
  options: {
    id: string;
    model: string;
    chunkChars: number;
    body: ChatRequestBody;
    wire?: WireQuirks;
    midStream?: () => Promise<void>;
    chunkDelayMs?: number;
  },
): Response {
  const wire = options.wire ?? {};
  if (options.body.stream) return streamResponse(reply, { ...options, wire });
  return Response.json({
    id: options.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: options.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: reply.content === "" && reply.toolCalls.length ? null : reply.content,
        ...(reply.toolCalls.length
          ? {
            tool_calls: reply.toolCalls.map((c) => ({
              id: c.id,
              ...(wire.untyped_tool_calls ? {} : { type: "function" }),
              function: { name: c.name, arguments: c.arguments },
            })),
          }
          : {}),
      },
      finish_reason: finishReason(reply, wire),
      logprobs: null,
    }],
    usage: reply.usage,
  });
}

function buildReply(entry: ScriptEntry, body: ChatRequestBody, completion: number): Reply {
  const toolCalls = (entry.tool_calls ?? []).map((call, i) => ({
    id: call.id ?? `call_${completion}_${i + 1}`,
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  const content = entry.content ?? "";
  const promptChars = (body.messages ?? []).reduce((n, m) => n + textOf(m.content).length, 0);
  const completionChars = content.length +
    toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const prompt_tokens = entry.usage?.prompt_tokens ?? Math.ceil(promptChars / 4);
  const completion_tokens = entry.usage?.completion_tokens ?? Math.ceil(completionChars / 4);
  return {
    content,
    toolCalls,
    usage: {
      prompt_tokens,
      completion_tokens,
      total_tokens: prompt_tokens + completion_tokens,
      // Sent only when the script says, as servers without a prompt cache (llama.cpp, Ollama) omit it.
      ...(entry.usage?.cached_tokens === undefined
        ? {}
        : { prompt_tokens_details: { cached_tokens: entry.usage.cached_tokens } }),
      ...(entry.usage?.reasoning_tokens === undefined
        ? {}
        : { completion_tokens_details: { reasoning_tokens: entry.usage.reasoning_tokens } }),
    },
  };
}

function finishReason(reply: Reply, wire: WireQuirks): string | null {
  if (wire.finish_reason !== undefined) return wire.finish_reason;
  return reply.toolCalls.length ? "tool_calls" : "stop";
}

/** Sends the reply as OpenAI does: role first, content in pieces, tool calls as index-based deltas. */
function streamResponse(
  reply: Reply,
  options: {
    id: string;
    model: string;
    chunkChars: number;
    body: ChatRequestBody;
    wire: WireQuirks;
    midStream?: () => Promise<void>;
    chunkDelayMs?: number;
  },
): Response {
  const { wire } = options;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: options.id,
    object: "chat.completion.chunk",
    created,
    model: options.model,
    choices,
    ...extra,
  });
  const delta = (value: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta: value,
    finish_reason: finish,
    logprobs: null,
  });
  const chunks: unknown[] = [chunk([delta({ role: "assistant", content: "" })])];
  for (const piece of split(reply.content, options.chunkChars)) {
    chunks.push(chunk([delta({ content: piece })]));
  }
  reply.toolCalls.forEach((call, index) => {
    chunks.push(chunk([delta({
      tool_calls: [{
        index,
        id: call.id,
        ...(wire.untyped_tool_calls ? {} : { type: "function" }),
        function: { name: call.name, arguments: "" },
      }],
    })]));
    for (const piece of split(call.arguments, options.chunkChars)) {
      chunks.push(chunk([delta({ tool_calls: [{ index, function: { arguments: piece } }] })]));
    }
  });
  const finish = finishReason(reply, wire);
  if (finish !== null) chunks.push(chunk([delta({}, finish)]));
  if (options.body.stream_options?.include_usage) chunks.push(chunk([], { usage: reply.usage }));
  const encoder = new TextEncoder();
  const lines = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`);
  if (!wire.no_done) lines.push("data: [DONE]\n\n");
  // One enqueue per chunk so the client really receives several network reads.
  const half = Math.floor(lines.length / 2);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent++ === half) await options.midStream?.();
      if (options.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, options.chunkDelayMs));
      const line = lines.shift();
      if (line === undefined) controller.close();
      else controller.enqueue(encoder.encode(line));
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((
      part,
    ) => (part && typeof part === "object" && "text" in part ? String(part.text) : "")).join(
      "",
    );
  }
  return "";
}

/** Real OpenAI echoes (part of) a rejected key; echoing it whole lets tests prove clients never leak it. */
function rejectKey(request: Request): Response {
  const sent = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
  return errorResponse(
    401,
    `Incorrect API key provided: ${sent}`,
    "invalid_request_error",
    "invalid_api_key",
  );
}

/** One Chat Completions stream event (`data: …` line pair) with a single choice, as servers send them. */
export function sseChunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${
    JSON.stringify({
      id: "c1",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    })
  }\n\n`;
}

export function errorResponse(
  status: number,
  message: string,
  type: string,
  code: string | undefined,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ error: { message, type, code: code ?? null, param: null } }, { status, headers });
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

if (import.meta.main) {
  const path = Deno.args[0];
  if (!path) {
    console.error("usage: deno run -A tests/_testing/openai_server.ts REPLIES.yaml [--api-key KEY]");
    Deno.exit(2);
  }
  const { loadScript } = await import("../../runtime/providers/scripted.ts");
  const keyFlag = Deno.args.indexOf("--api-key");
  const apiKey = keyFlag > 0 ? Deno.args[keyFlag + 1] : undefined;
  const server = await startOpenAIServer({ script: loadScript(path), ...(apiKey ? { apiKey } : {}) });
  console.log(server.url);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => server.close().then(() => Deno.exit(0)));
  }
}
