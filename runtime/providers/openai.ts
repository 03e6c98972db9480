/**
 * The `openai` provider: Chat Completions against any OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM,
 * llama.cpp, Ollama). The SDK's own retries are off: this module retries so that every retry is reported
 * through `onRetry` (a `provider.retry` event). Import it lazily; it is the only module that loads `openai`.
 */
import OpenAI from "openai";
import { type Clock, systemClock } from "../core/clock.ts";
import { formatDuration } from "../core/duration.ts";
import {
  type CompleteOptions,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  ProviderError,
} from "./provider.ts";
import { createRedactor, type Redactor } from "../core/redact.ts";
import type { Message, ToolCall, Usage } from "../core/types.ts";

export interface OpenAIProviderOptions {
  model: string;
  /** Default https://api.openai.com/v1. */
  baseURL?: string;
  apiKey: string;
  /** Stream replies (default true); content deltas go to `onDelta`. */
  stream?: boolean;
  /** Per attempt: until the response starts, then (streaming) between chunks. Default 120 s. */
  timeoutMs?: number;
  /** Retries after the first attempt on 408, 429, 5xx, connection errors and timeouts. Default 3. */
  maxRetries?: number;
  /** First backoff delay when the server sends no Retry-After; doubles per retry up to 8 s. Default 500 ms. */
  retryBaseMs?: number;
  clock?: Clock;
  fetch?: typeof fetch;
}

const DEFAULT_BASE_URL = "https://api.openai.com/v1";
const MAX_RETRY_AFTER_MS = 60_000;
const MAX_BACKOFF_MS = 8_000;
const CONTEXT_OVERFLOW_TEXT =
  /context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|input is too long|too long for the model|reduce the length|exceeds? the (available )?(context|max)/i;
const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** How one failed attempt is judged. `detail` is one redacted line. */
interface Failure {
  status: number | null;
  detail: string;
  retryable: boolean;
  contextOverflow: boolean;
  retryAfterMs?: number;
}

class AttemptTimeout extends Error {
  constructor(ms: number) {
    super(`no response within ${formatDuration(ms)}`);
    this.name = "AttemptTimeout";
  }
}

class IncompleteStream extends Error {
  constructor() {
    super("the stream ended before a finish_reason");
    this.name = "IncompleteStream";
  }
}

export function createOpenAIProvider(options: OpenAIProviderOptions): Provider {
  const baseURL = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const maxRetries = options.maxRetries ?? 3;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const stream = options.stream ?? true;
  const redact = createRedactor({}, { API_KEY: options.apiKey });
  // Every option the SDK would otherwise read from the environment is given explicitly.
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL,
    organization: null,
    project: null,
    webhookSecret: null,
    logLevel: "off",
    maxRetries: 0,
    // Our clock-driven timer is the real timeout; the SDK's (10 min by default) must never fire first.
    timeout: Math.max(timeoutMs + 1_000, 600_000),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  const attempt = async (
    request: ModelRequest,
    signal: AbortSignal | undefined,
    onDelta: ((text: string) => void) | undefined,
  ): Promise<ModelResponse> => {
    const controller = new AbortController();
    const forward = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", forward, { once: true });
    let timer: AbortController | undefined;
    const armTimer = () => {
      timer?.abort();
      const current = new AbortController();
      timer = current;
      clock.sleep(timeoutMs, current.signal).then(
        () => controller.abort(new AttemptTimeout(timeoutMs)),
        () => {},
      );
    };
    armTimer();
    try {
      const body = toRequestBody(request);
      if (!stream) {
        const completion = await client.chat.completions.create(body, { signal: controller.signal });
        return fromCompletion(completion);
      }
      const chunks = await client.chat.completions.create(
        { ...body, stream: true, stream_options: { include_usage: true } },
        { signal: controller.signal },
      );
      const accumulator = new StreamAccumulator();
      for await (const chunk of chunks) {
        armTimer();
        const text = accumulator.add(chunk);
        if (text) onDelta?.(text);
      }
      // The SDK ends iteration quietly when the request is aborted; surface why.
      controller.signal.throwIfAborted();
      return accumulator.result();
    } catch (error) {
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      timer?.abort();
      signal?.removeEventListener("abort", forward);
    }
  };

  return {
    name: "openai",
    async complete(request: ModelRequest, callOptions: CompleteOptions = {}): Promise<ModelResponse> {
      const { signal, onRetry, onDelta } = callOptions;
      for (let retries = 0;; retries++) {
        signal?.throwIfAborted();
        let streamed = false;
        const forwardDelta = onDelta &&
          ((text: string) => {
            streamed = true;
            onDelta(text);
          });
        try {
          return await attempt(request, signal, forwardDelta);
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          const failure = judge(error, { redact, now: clock.now() });
          const where = `Cannot complete model call to ${baseURL}`;
          if (failure.contextOverflow) {
            throw new ProviderError(
              `${where}: the prompt is too long for the model's context (${failure.detail})`,
              {
                status: failure.status,
                contextOverflow: true,
              },
            );
          }
          // Text already handed to onDelta cannot be taken back, so a broken stream is not replayed.
          if (!failure.retryable || retries >= maxRetries || streamed) {
            const after = retries === 0 ? "" : ` after ${retries} ${retries === 1 ? "retry" : "retries"}`;
            throw new ProviderError(`${where}: ${failure.detail}${after}`, { status: failure.status });
          }
          const delay = failure.retryAfterMs ?? backoff(retries + 1, retryBaseMs);
          onRetry?.({ attempt: retries + 1, delay_ms: delay, status: failure.status, error: failure.detail });
          await clock.sleep(delay, signal);
        }
      }
    },
  };
}

type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

function toRequestBody(request: ModelRequest): ChatParams {
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
    // max_tokens rather than max_completion_tokens: llama.cpp, vLLM and Ollama understand it.
    ...(request.max_tokens === undefined ? {} : { max_tokens: request.max_tokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  };
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
  const choice = completion.choices?.[0];
  if (!choice) throw new Error("the response has no choices");
  const toolCalls: ToolCall[] = [];
  for (const call of choice.message.tool_calls ?? []) {
    if (call.type === "function") {
      toolCalls.push({
        id: call.id || newCallId(),
        name: call.function.name,
        arguments: call.function.arguments,
      });
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

  result(): ModelResponse {
    if (this.#finish === null) throw new IncompleteStream();
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
  return { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 };
}

function newCallId(): string {
  return `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

function judge(error: unknown, context: { redact: Redactor; now: number }): Failure {
  const oneLine = (text: string) => {
    const line = context.redact(text).split("\n")[0]!.trim();
    return line.length > 300 ? `${line.slice(0, 297)}...` : line;
  };
  if (error instanceof AttemptTimeout || error instanceof OpenAI.APIConnectionTimeoutError) {
    return {
      status: null,
      detail: oneLine(`timed out: ${error.message}`),
      retryable: true,
      contextOverflow: false,
    };
  }
  if (error instanceof OpenAI.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return {
      status: null,
      detail: oneLine(`connection failed${cause}`),
      retryable: true,
      contextOverflow: false,
    };
  }
  if (error instanceof OpenAI.APIError) {
    const status = typeof error.status === "number" ? error.status : null;
    const body = error.error as { message?: unknown } | undefined;
    const message = typeof body?.message === "string" ? body.message : "";
    const contextOverflow = (status === null || status === 400 || status === 413) &&
      (error.code === "context_length_exceeded" || CONTEXT_OVERFLOW_TEXT.test(message));
    const head = status === null
      ? "error in stream"
      : `HTTP ${status}${STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : ""}`;
    const retryAfterMs = status === null ? undefined : retryAfter(error.headers, context.now);
    return {
      status,
      detail: oneLine(message ? `${head} (${message})` : head),
      retryable: status !== null && (status === 408 || status === 429 || status >= 500),
      contextOverflow,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  // fetch raises TypeError when the connection drops while the body is read.
  const retryable = error instanceof TypeError || error instanceof IncompleteStream;
  const detail = error instanceof Error ? error.message : String(error);
  return { status: null, detail: oneLine(detail), retryable, contextOverflow: false };
}

/** Reads `retry-after-ms`, or `retry-after` as seconds or an HTTP date; capped at 60 s. */
function retryAfter(headers: Headers | undefined, now: number): number | undefined {
  const ms = Number(headers?.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, MAX_RETRY_AFTER_MS);
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  const delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(delay)) return undefined;
  return Math.min(Math.max(0, Math.round(delay)), MAX_RETRY_AFTER_MS);
}

/** Exponential backoff with up to 25 % jitter below the nominal delay, so clients do not retry in step. */
function backoff(retry: number, baseMs: number): number {
  const nominal = Math.min(baseMs * 2 ** (retry - 1), MAX_BACKOFF_MS);
  return Math.round(nominal * (1 - Math.random() * 0.25));
}
