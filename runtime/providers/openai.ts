/**
 * The `openai` provider: Chat Completions against any OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM,
 * llama.cpp, Ollama), or OpenAI's Responses API (`model.api`, wire in openai_responses.ts). The SDK's own retries are off: this module retries so that every retry is reported
 * through `onRetry` (a `provider.retry` event). Import it lazily; it is the only module that loads `openai`.
 */
import OpenAI from "./openai_sdk.ts";
import type { Clock } from "../core/clock.ts";
import { formatDuration } from "../core/duration.ts";
import { untilAborted, watchStall } from "../core/stall.ts";
import type { CompleteOptions, ModelRequest, ModelResponse, Provider, ProviderContext } from "./provider.ts";
import { callBounds, type ResolvedModel } from "./model.ts";
import { createRedactor, type Redactor } from "../core/redact.ts";
import { isLocalEndpoint, limitInMessage, probeServerWindow } from "./server_window.ts";
import { failureKind, retryAfterMs } from "./overload.ts";
import { callDefaults, type Failure, httpStatusLine, retryCall } from "./retry_call.ts";
import type { Message, ToolCall, Usage } from "../core/types.ts";
import { tokenUsage } from "./usage.ts";
import { apiFor, type OpenAIApi, type OpenAIApiSetting, type OpenAITransport } from "./openai_api.ts";
import type { ResponsesStream } from "./openai_responses.ts";
import type { ResponsesSocket } from "./openai_ws.ts";
import { IncompleteResponseStream, ResponsesSocketClosed } from "./openai_responses_errors.ts";

export interface OpenAIProviderOptions {
  model: string;
  /** Default https://api.openai.com/v1. */
  baseURL?: string;
  apiKey: string;
  /** Stream replies (default true); content deltas go to `onDelta`. */
  stream?: boolean;
  /**
   * Longest the server may send nothing: until the response starts, then between bytes of its body, streaming
   * or not. Default 120 s. A stalled attempt is not retried: the call fails with a StallError.
   */
  idleTimeoutMs?: number;
  /** Ceiling on one call, its retries and their waits included (a trickle that never ends). Default 10 min. */
  ceilingMs?: number;
  /**
   * Retries after the first attempt on 408, 409, 429 (not an exhausted quota), 5xx, connection errors and
   * timeouts (overload.ts). Default 3.
   */
  maxRetries?: number;
  /** First backoff delay when the server sends no Retry-After; doubles per retry up to 8 s. Default 500 ms. */
  retryBaseMs?: number;
  clock?: Clock;
  fetch?: typeof fetch;
  /**
   * An OpenAI reasoning model (o-series, gpt-5): the output limit goes as `max_completion_tokens` (they refuse
   * `max_tokens`) and no temperature is sent (they refuse any but the default).
   */
  reasoning?: boolean;
  /** Sent as `reasoning_effort` to a reasoning model. */
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
  /** Sent as `prompt_cache_key` with every request: requests that share it share the server's prompt cache. */
  promptCacheKey?: string;
  /**
   * Chat Completions, the Responses API, or `auto`: Responses for the models served only there, chosen per
   * request (a `model.fallback` model gets its own). Default chat.
   */
  api?: OpenAIApiSetting;
  /**
   * How Responses API calls travel: `http` (default), or `websocket`, one connection per provider (per
   * session) that later calls continue on (openai_ws.ts). Chat Completions calls always go over HTTP.
   */
  transport?: OpenAITransport;
  /**
   * Makes the SDK client from the options this module settles (another route to the same API: Azure's
   * `AzureOpenAI`), once per API it is used for; such a provider is not probed for a local server's window.
   * Default `new OpenAI(…)`.
   */
  client?: (options: OpenAIClientOptions, api: OpenAIApi) => OpenAI;
  /** The provider's name (default "openai"). */
  name?: string;
}

export type OpenAIClientOptions = NonNullable<ConstructorParameters<typeof OpenAI>[0]>;

const DEFAULT_BASE_URL = "https://api.openai.com/v1";
const CONTEXT_OVERFLOW_TEXT =
  /context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|input is too long|too long for the model|reduce the length|exceeds? the (available )?(context|max)/i;

/**
 * What {@linkcode watchingFetch} observes of one attempt's response: every byte that arrives (`progress`, the
 * idle watch), and whether a streamed body carried the `data: [DONE]` sentinel. The SDK ends its iteration
 * the same way on `[DONE]` and on a connection closed early; only the sentinel says the answer is whole when
 * a server (llama.cpp, some proxies) sends no `finish_reason`.
 */
interface StreamWatch {
  stream: boolean;
  done: boolean;
  /** Bytes received so far (headers count as progress, not bytes). */
  bytes: number;
  progress: () => void;
}

/** The RequestInit field that carries an attempt's StreamWatch to the fetch wrapper (never sent). */
const STREAM_WATCH = "hermesStreamWatch";
const DONE_LINE = /(^|\n)data: ?\[DONE\]/;

/** Wraps fetch so that a request carrying a StreamWatch reports its progress and sees `data: [DONE]`. */
function watchingFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const watch = (init as Record<string, unknown> | undefined)?.[STREAM_WATCH] as StreamWatch | undefined;
    const response = await inner(input, init);
    if (!watch) return response;
    watch.progress();
    if (!response.body) return response;
    const decoder = new TextDecoder();
    let tail = "\n";
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          watch.bytes += chunk.byteLength;
          watch.progress();
          controller.enqueue(chunk);
          if (!watch.stream || watch.done) return;
          // The sentinel may be split across reads: keep a short tail of the text seen so far.
          const text = tail + decoder.decode(chunk, { stream: true });
          if (DONE_LINE.test(text)) watch.done = true;
          tail = text.slice(-16);
        },
      }),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

class IncompleteStream extends Error {
  constructor() {
    super("the stream ended before a finish_reason");
    this.name = "IncompleteStream";
  }
}

/** The openai provider's own settings, as its registry entry resolves them. */
export interface OpenAISettings {
  /** `model.api`: Chat Completions, the Responses API, or by the model's name. */
  api: OpenAIApiSetting;
  /** `model.transport`: how Responses API calls travel (absent: HTTP). */
  transport?: OpenAITransport;
}

/** The registry's entry point (providers/registry.ts): the client a resolved `model:` asks for. */
export function providerFor(model: ResolvedModel<OpenAISettings>, context: ProviderContext): Provider {
  return createOpenAIProvider(openAIOptions(model, context));
}

/** The provider options a resolved `model:` means (also the azure provider's, which adds its client). */
export function openAIOptions(
  model: ResolvedModel<OpenAISettings>,
  context: ProviderContext,
): OpenAIProviderOptions {
  return {
    model: model.name,
    // The SDK insists on a key; a keyless server ignores this one.
    apiKey: context.apiKey || "not-needed",
    stream: model.stream,
    clock: context.clock,
    reasoning: model.reasoning,
    api: model.settings.api,
    ...(model.settings.transport ? { transport: model.settings.transport } : {}),
    ...(model.reasoning_effort ? { reasoningEffort: model.reasoning_effort } : {}),
    ...(model.prompt_cache_key ? { promptCacheKey: model.prompt_cache_key } : {}),
    ...(model.base_url ? { baseURL: model.base_url } : {}),
    ...callBounds(model),
  };
}

export function createOpenAIProvider(options: OpenAIProviderOptions): Provider {
  const baseURL = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const { clock, idleTimeoutMs, ceilingMs, maxRetries, retryBaseMs, sdkTimeoutMs } = callDefaults(options);
  const stream = options.stream ?? true;
  const redact = createRedactor({}, { API_KEY: options.apiKey });
  // Every option the SDK would otherwise read from the environment is given explicitly.
  const clientOptions: OpenAIClientOptions = {
    apiKey: options.apiKey,
    baseURL,
    organization: null,
    project: null,
    webhookSecret: null,
    logLevel: "off",
    maxRetries: 0,
    // Our clock-driven watches are the real timeouts; the SDK's must never fire first.
    timeout: sdkTimeoutMs,
    fetch: watchingFetch(options.fetch ?? globalThis.fetch),
  };
  const clients = new Map<OpenAIApi, OpenAI>();
  const clientFor = (api: OpenAIApi): OpenAI => {
    let client = clients.get(api);
    if (!client) {
      client = options.client ? options.client(clientOptions, api) : new OpenAI(clientOptions);
      clients.set(api, client);
    }
    return client;
  };
  // One WebSocket per API client, opened on the first Responses call that needs it; the transport's modules
  // are loaded then too, so a job over HTTP (the default) does not load them before its first request.
  const sockets = new Map<OpenAI, ResponsesSocket>();
  const socketFor = async (client: OpenAI): Promise<ResponsesSocket> => {
    let socket = sockets.get(client);
    if (!socket) {
      const { ResponsesSocket } = await import("./openai_ws.ts");
      socket = sockets.get(client) ?? new ResponsesSocket({ client });
      sockets.set(client, socket);
    }
    return socket;
  };

  const attempt = async (
    request: ModelRequest,
    signal: AbortSignal,
    callbacks: Pick<CompleteOptions, "onDelta" | "onProgress" | "onOutput">,
  ): Promise<ModelResponse> => {
    const controller = new AbortController();
    const watch: StreamWatch = {
      stream,
      done: false,
      bytes: 0,
      progress: () => {
        idle.touch();
        callbacks.onProgress?.();
      },
    };
    const idle = watchStall(clock, {
      idleMs: idleTimeoutMs,
      idleMessage: (ms) =>
        `the server sent nothing for ${formatDuration(ms)} ${
          watch.bytes ? "in the middle of its reply" : "after the request"
        } (model.idle_timeout)`,
    });
    const stop = AbortSignal.any([signal, idle.signal]);
    const forward = () => controller.abort(stop.reason);
    stop.addEventListener("abort", forward, { once: true });
    if (stop.aborted) forward();
    const fetchOptions = { [STREAM_WATCH]: watch } as unknown as NonNullable<
      OpenAI.RequestOptions["fetchOptions"]
    >;
    try {
      const api = apiFor(options.api ?? "chat", request.model);
      const client = clientFor(api);
      if (api === "responses") {
        // The Responses API's wire is loaded on its first call: a Chat Completions job never loads it.
        const { fromResponse, toResponsesBody } = await import("./openai_responses.ts");
        const body = toResponsesBody(request, options);
        if (options.transport === "websocket") {
          // Always streamed on the socket; the text reaches onDelta only when the job streams, as on HTTP.
          const socket = await socketFor(client);
          const events = socket.events(body, {
            signal: controller.signal,
            onFrame: (chars) => {
              watch.bytes += chars;
              watch.progress();
            },
          });
          const { onDelta: _text, ...quiet } = callbacks;
          return (await readResponse(events, stream ? callbacks : quiet, { signal: controller.signal }))
            .result();
        }
        if (!stream) {
          return fromResponse(
            await client.responses.create(body, { signal: controller.signal, fetchOptions }),
          );
        }
        const events = await client.responses.create(
          { ...body, stream: true },
          { signal: controller.signal, fetchOptions },
        );
        return (await readResponse(events, callbacks, { signal: controller.signal })).result();
      }
      // Whether the schema can go strict is asked (and its module loaded) only of a request that has one.
      const strict = request.output_schema
        ? (await import("./strict_schema.ts")).isStrictSchema(request.output_schema.schema)
        : false;
      const body = toRequestBody(request, { ...options, strict });
      if (!stream) {
        const completion = await client.chat.completions.create(body, {
          signal: controller.signal,
          fetchOptions,
        });
        return fromCompletion(completion);
      }
      const chunks = await client.chat.completions.create(
        { ...body, stream: true, stream_options: { include_usage: true } },
        { signal: controller.signal, fetchOptions },
      );
      const accumulator = new StreamAccumulator();
      for await (const chunk of untilAborted(chunks, controller.signal)) {
        const text = accumulator.add(chunk);
        if (text) callbacks.onDelta?.(text);
        const chars = streamedChars(chunk);
        if (chars) callbacks.onOutput?.(chars);
        // Stopped (the cost cap, a cancel): read no further, even what the client has already buffered.
        if (controller.signal.aborted) break;
      }
      // The SDK ends iteration quietly when the request is aborted; surface why.
      controller.signal.throwIfAborted();
      return accumulator.result({ sawDone: watch.done });
    } catch (error) {
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      stop.removeEventListener("abort", forward);
      await idle.stop();
    }
  };

  const doFetch = options.fetch ?? globalThis.fetch;
  return {
    name: options.name ?? "openai",
    // Only local servers are asked: a hosted API has no such route, and the probe must cost nothing there.
    serverWindow: (probe = {}) =>
      !options.client && isLocalEndpoint(baseURL)
        ? probeServerWindow(baseURL, { model: options.model, fetch: doFetch, ...probe })
        : Promise.resolve(null),
    async close() {
      await Promise.all([...sockets.values()].map((socket) => socket.close()));
    },
    complete(request: ModelRequest, callOptions: CompleteOptions = {}): Promise<ModelResponse> {
      return retryCall((signal, callbacks) => attempt(request, signal, callbacks), callOptions, {
        where: `Cannot complete model call to ${baseURL}`,
        clock,
        ceilingMs,
        maxRetries,
        retryBaseMs,
        judge: (error, now) => judge(error, { redact, now }),
      });
    },
  };
}

/**
 * Reads a streamed Responses API reply, from SSE or a WebSocket alike, into one ResponsesStream: text deltas
 * to `onDelta`, characters of reply to `onOutput`. Stopped (the cost cap, a cancel), it reads no further,
 * not even what the client has already buffered.
 */
async function readResponse(
  events: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>,
  callbacks: Pick<CompleteOptions, "onDelta" | "onOutput">,
  options: { signal: AbortSignal },
): Promise<ResponsesStream> {
  const { ResponsesStream } = await import("./openai_responses.ts");
  const reply = new ResponsesStream();
  for await (const event of untilAborted(events, options.signal)) {
    const { text, chars } = reply.add(event);
    if (text) callbacks.onDelta?.(text);
    if (chars) callbacks.onOutput?.(chars);
    if (options.signal.aborted) break;
  }
  // The SDK ends iteration quietly when the request is aborted; surface why.
  options.signal.throwIfAborted();
  return reply;
}

type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

type BodyOptions = Pick<OpenAIProviderOptions, "reasoning" | "reasoningEffort" | "promptCacheKey"> & {
  /** Whether `output_schema` goes as a strict json_schema (strict_schema.ts). */
  strict?: boolean;
};

function toRequestBody(request: ModelRequest, options: BodyOptions = {}): ChatParams {
  const limit = request.max_tokens === undefined
    ? {}
    : options.reasoning
    ? { max_completion_tokens: request.max_tokens }
    // max_tokens rather than max_completion_tokens: llama.cpp, vLLM and Ollama understand it.
    : { max_tokens: request.max_tokens };
  return {
    model: request.model,
    messages: request.messages.map(toChatMessage),
    ...(request.tools.length
      ? {
        tools: request.tools.map((tool) => ({
          type: "function" as const,
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        })),
      }
      : {}),
    ...limit,
    ...(request.temperature === undefined || options.reasoning ? {} : { temperature: request.temperature }),
    ...(options.reasoning && options.reasoningEffort ? { reasoning_effort: options.reasoningEffort } : {}),
    ...(options.promptCacheKey ? { prompt_cache_key: options.promptCacheKey } : {}),
    ...(request.output_schema
      ? { response_format: responseFormat(request.output_schema, options.strict ?? false) }
      : {}),
  };
}

/** `response_format` json_schema; strict (the server then guarantees the shape) when the schema allows it. */
function responseFormat(output: NonNullable<ModelRequest["output_schema"]>, strict: boolean) {
  return {
    type: "json_schema" as const,
    json_schema: { name: output.name, schema: output.schema, strict },
  };
}

/** What a chunk adds to the reply: its text, tool-call names and arguments, and reasoning text. */
function streamedChars(chunk: OpenAI.Chat.ChatCompletionChunk): number {
  const delta = chunk.choices?.[0]?.delta as
    | (OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string; reasoning?: string })
    | undefined;
  if (!delta) return 0;
  let chars = (delta.content?.length ?? 0) + (delta.reasoning_content?.length ?? 0) +
    (typeof delta.reasoning === "string" ? delta.reasoning.length : 0);
  for (const call of delta.tool_calls ?? []) {
    chars += (call.function?.name?.length ?? 0) + (call.function?.arguments?.length ?? 0);
  }
  return chars;
}

function toChatMessage(message: Message): OpenAI.Chat.ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      return { role: "user", content: message.content };
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id ?? "", content: message.content };
    case "assistant": {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return { role: "assistant", content: message.content };
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function" as const,
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
  }
}

function fromCompletion(completion: OpenAI.Chat.ChatCompletion): ModelResponse {
  // Some servers answer HTTP 200 with an error object instead of a completion.
  const carried = (completion as { error?: unknown }).error;
  if (carried) throw new OpenAI.APIError(undefined, carried as object, undefined, undefined);
  const choice = completion.choices?.[0];
  if (!choice) throw new Error("the response has no choices");
  const toolCalls: ToolCall[] = [];
  for (const call of choice.message.tool_calls ?? []) {
    // A call with a `function` part is a function call, whether or not the server also sent `type`.
    const fn = (call as { function?: { name?: string; arguments?: string } }).function;
    if (fn?.name) {
      toolCalls.push({ id: call.id || newCallId(), name: fn.name, arguments: fn.arguments ?? "" });
    }
  }
  return response(choice.message.content ?? "", toolCalls, usageOf(completion.usage), choice.finish_reason);
}

/** Reassembles a streamed reply: content appended, tool calls merged by index as the SDK does. */
class StreamAccumulator {
  #content = "";
  #calls: ToolCall[] = [];
  #usage: Usage | null = null;
  #finish: string | null = null;

  /** Returns the content delta of this chunk, if any. */
  add(chunk: OpenAI.Chat.ChatCompletionChunk): string {
    if (chunk.usage) this.#usage = usageOf(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) return "";
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    (choice.delta?.tool_calls ?? []).forEach((delta, position) => {
      const slot = (this.#calls[delta.index ?? position] ??= { id: "", name: "", arguments: "" });
      if (delta.id) slot.id = delta.id;
      if (delta.function?.name) slot.name = delta.function.name;
      if (delta.function?.arguments) slot.arguments += delta.function.arguments;
    });
    const text = choice.delta?.content ?? "";
    this.#content += text;
    return text;
  }

  /** `sawDone`: the stream carried `data: [DONE]`, which makes it whole even without a finish_reason. */
  result(options: { sawDone: boolean }): ModelResponse {
    if (this.#finish === null && !options.sawDone) throw new IncompleteStream();
    const calls = this.#calls.filter((c) => c !== undefined).map((c) => ({ ...c, id: c.id || newCallId() }));
    return response(this.#content, calls, this.#usage, this.#finish);
  }
}

function response(
  content: string,
  toolCalls: ToolCall[],
  usage: Usage | null,
  finish: string | null,
): ModelResponse {
  return {
    message: { role: "assistant", content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
    usage,
    finish_reason: finish ?? (toolCalls.length ? "tool_calls" : "stop"),
  };
}

function usageOf(usage: OpenAI.CompletionUsage | null | undefined): Usage | null {
  if (!usage) return null;
  const details = [
    usage.prompt_tokens_details?.cached_tokens,
    usage.completion_tokens_details?.reasoning_tokens,
  ];
  return tokenUsage(usage.prompt_tokens, usage.completion_tokens, ...details);
}

function newCallId(): string {
  return `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

function judge(error: unknown, context: { redact: Redactor; now: number }): Failure {
  const oneLine = (text: string) => {
    const line = context.redact(text).split("\n")[0]!.trim();
    return line.length > 300 ? `${line.slice(0, 297)}...` : line;
  };
  if (error instanceof ResponsesSocketClosed) {
    // A refused handshake is judged by its status, like the HTTP request it stands for.
    const status = error.status;
    return {
      status,
      detail: oneLine(
        status === null
          ? `connection failed: ${error.message}`
          : `${httpStatusLine(status)} (${error.message})`,
      ),
      kind: status === null ? "transient" : failureKind(status, ""),
      contextOverflow: false,
      contextLimit: null,
    };
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return {
      status: null,
      detail: oneLine(`timed out: ${error.message}`),
      kind: "transient",
      contextOverflow: false,
      contextLimit: null,
    };
  }
  if (error instanceof OpenAI.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return {
      status: null,
      detail: oneLine(`connection failed${cause}`),
      kind: "transient",
      contextOverflow: false,
      contextLimit: null,
    };
  }
  if (error instanceof OpenAI.APIError) {
    const body = error.error as { message?: unknown } | undefined;
    // An error object inside an HTTP-200 body or stream has no HTTP status: judge it by the one it carries.
    const carried = typeof error.status === "number" ? null : carriedStatus(body);
    const status = typeof error.status === "number" ? error.status : carried;
    const message = typeof body?.message === "string" ? body.message : "";
    const contextOverflow = (status === null || status === 400 || status === 413) &&
      (error.code === "context_length_exceeded" || CONTEXT_OVERFLOW_TEXT.test(message));
    const httpText = httpStatusLine(status);
    const head = status === null
      ? "error in stream"
      : carried === null
      ? httpText
      : `error in a 200 response, carrying ${httpText}`;
    const retryAfter = status === null ? undefined : retryAfterMs(error.headers, context.now);
    const code = [error.code, error.type, (body as { type?: unknown } | undefined)?.type]
      .filter((v) => typeof v === "string").join(" ");
    const detail = oneLine(message ? `${head} (${message})` : head);
    return {
      status,
      detail,
      // An error object in a stream that names no status is not a reason to ask again.
      kind: status === null ? "fatal" : failureKind(status, code),
      contextOverflow,
      contextLimit: contextOverflow ? limitInMessage(detail) : null,
      ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
    };
  }
  // fetch raises TypeError when the connection drops while the body is read.
  const retryable = error instanceof TypeError || error instanceof IncompleteStream ||
    error instanceof IncompleteResponseStream;
  const detail = error instanceof Error ? error.message : String(error);
  return {
    status: null,
    detail: oneLine(detail),
    kind: retryable ? "transient" : "fatal",
    contextOverflow: false,
    contextLimit: null,
  };
}

const ERROR_TYPE_STATUS: readonly [RegExp, number][] = [
  [/rate.?limit|too.?many|quota/i, 429],
  [/overload|unavailable|capacity/i, 503],
  [/timeout/i, 504],
  [/server|internal|upstream|api_error/i, 500],
  [/context|too.?long|invalid.?request|bad.?request/i, 400],
  [/auth|api.?key/i, 401],
];

/**
 * The HTTP status an in-band error object stands for: a numeric `code` or `status` (LiteLLM, vLLM, Ollama
 * send `{"error": {"code": 429, …}}`), else its `type` or `code` text (`rate_limit_error`, `server_error`,
 * `overloaded_error`); null when it names none.
 */
function carriedStatus(body: unknown): number | null {
  if (!body || typeof body !== "object") return null;
  const fields = body as Record<string, unknown>;
  for (const value of [fields.status, fields.code, fields.status_code]) {
    const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : NaN;
    if (Number.isInteger(n) && n >= 400 && n <= 599) return n;
  }
  const text = [fields.type, fields.code].filter((v) => typeof v === "string").join(" ");
  const mapped = ERROR_TYPE_STATUS.find(([pattern]) => pattern.test(text));
  return mapped ? mapped[1] : null;
}
