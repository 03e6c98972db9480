/**
 * The `anthropic` provider: the Messages API through the official SDK, streaming or not, with prompt-cache
 * breakpoints (anthropic_wire.ts), extended thinking, and `pause_turn` continued. The SDK's own retries are
 * off: this module retries 408, 429, 5xx and 529 (overloaded) itself by the shared policy (overload.ts),
 * honouring `retry-after`, so that every
 * retry is reported through `onRetry`. Import it lazily; with anthropic_platform.ts it is the only module
 * that loads `@anthropic-ai/sdk`.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { Clock } from "../core/clock.ts";
import { formatDuration } from "../core/duration.ts";
import { untilAborted, watchStall } from "../core/stall.ts";
import { createRedactor } from "../core/redact.ts";
import type { CompleteOptions, ModelRequest, ModelResponse, Provider, ProviderContext } from "./provider.ts";
import { callBounds, type ResolvedModel } from "./model.ts";
import { StreamAssembler } from "./anthropic_stream.ts";
import {
  fromWireResponse,
  toWireRequest,
  type WireRequest,
  type WireResponse,
  type WireUsage,
} from "./anthropic_wire.ts";
import { judgeAnthropicError } from "./anthropic_errors.ts";
import { callDefaults, retryCall } from "./retry_call.ts";
import { progressFetch, withProgress } from "./anthropic_fetch.ts";
import { checkPlatformEnv, type Platform, platformClient } from "./anthropic_platform.ts";

export interface AnthropicProviderOptions {
  model: string;
  /** Default https://api.anthropic.com. */
  baseURL?: string;
  apiKey: string;
  /** Stream replies (default true); text deltas go to `onDelta`. */
  stream?: boolean;
  /** Extended thinking (`model.thinking`). */
  thinking?: { budget_tokens: number };
  /** `max_tokens` when the request names none (default 8192; thinking adds its budget). */
  defaultMaxTokens?: number;
  /** Longest the server may send nothing (default 120 s); a stall is not retried. */
  idleTimeoutMs?: number;
  /** Ceiling on one call, its retries and their waits included (default 10 min). */
  ceilingMs?: number;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** First backoff delay when the server sends no retry-after; doubles per retry up to 8 s (default 500 ms). */
  retryBaseMs?: number;
  /** How many `pause_turn` continuations one call follows (default 8). */
  maxContinuations?: number;
  clock?: Clock;
  fetch?: typeof fetch;
  /** A client made elsewhere (Bedrock, Vertex), made at the first call: used instead of apiKey and baseURL. */
  client?: () => Promise<Anthropic>;
  /** The provider's name and where it calls, for messages (default "anthropic" and the base URL). */
  name?: string;
  where?: string;
}

const DEFAULT_BASE_URL = "https://api.anthropic.com";

/** The anthropic provider's own settings, as its registry entry resolves them. */
export interface AnthropicSettings {
  /** `model.thinking`: extended thinking. */
  thinking?: { budget_tokens: number };
  /** `model.platform`, when it is not the Anthropic API: Claude on Amazon Bedrock or Google Vertex AI. */
  platform?: Platform;
}

export function providerFor(model: ResolvedModel<AnthropicSettings>, context: ProviderContext): Provider {
  const { platform, thinking } = model.settings;
  if (platform) {
    checkPlatformEnv(platform, context.env);
    return createAnthropicProvider({
      model: model.name,
      apiKey: "",
      stream: model.stream,
      clock: context.clock,
      name: `anthropic (${platform})`,
      where: platform === "bedrock" ? "Amazon Bedrock" : "Vertex AI",
      client: () =>
        platformClient(platform, {
          env: context.env,
          // The platform SDK's own timeout backs up ours, as the Anthropic client's does.
          timeoutMs: callDefaults(callBounds(model)).sdkTimeoutMs,
          ...(model.base_url ? { baseURL: model.base_url } : {}),
        }),
      ...(thinking ? { thinking } : {}),
      ...callBounds(model),
    });
  }
  return createAnthropicProvider({
    model: model.name,
    apiKey: context.apiKey || "not-needed",
    stream: model.stream,
    clock: context.clock,
    ...(model.base_url ? { baseURL: model.base_url } : {}),
    ...(thinking ? { thinking } : {}),
    ...callBounds(model),
  });
}

export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  const baseURL = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const { clock, idleTimeoutMs, ceilingMs, maxRetries, retryBaseMs, sdkTimeoutMs } = callDefaults(options);
  const maxContinuations = options.maxContinuations ?? 8;
  const stream = options.stream ?? true;
  const redact = createRedactor({}, { API_KEY: options.apiKey });
  let made: Promise<Anthropic> | undefined;
  const client = () =>
    made ??= options.client?.() ?? Promise.resolve(
      new Anthropic({
        // Every option the SDK would otherwise read from the environment is given explicitly.
        apiKey: options.apiKey,
        authToken: null,
        webhookKey: null,
        baseURL,
        logLevel: "off",
        maxRetries: 0,
        // Our clock-driven watches are the real timeouts; the SDK's must never fire first.
        timeout: sdkTimeoutMs,
        fetch: progressFetch(options.fetch ?? globalThis.fetch),
      }),
    );
  const wireOptions = {
    defaultMaxTokens: options.defaultMaxTokens ?? 8192,
    ...(options.thinking ? { thinking: options.thinking } : {}),
  };

  /** One HTTP exchange: the whole reply, or its stream assembled. */
  const exchange = async (
    body: WireRequest,
    signal: AbortSignal,
    onProgress: () => void,
    onDelta: ((text: string) => void) | undefined,
    onOutput: ((chars: number) => void) | undefined,
  ): Promise<WireResponse> => {
    const requestOptions = { signal, fetchOptions: withProgress(onProgress) } as Anthropic.RequestOptions;
    if (!stream) {
      const params = body as unknown as Anthropic.MessageCreateParamsNonStreaming;
      return await (await client()).messages.create(params, requestOptions) as unknown as WireResponse;
    }
    const params = { ...body, stream: true } as unknown as Anthropic.MessageCreateParamsStreaming;
    const events = await (await client()).messages.create(params, requestOptions);
    const assembler = new StreamAssembler(onDelta, onOutput);
    // Raced with the abort: a reply of keep-alives only, or a body read the SDK's abort missed, still ends.
    for await (const event of untilAborted(events, signal)) {
      assembler.add(event as unknown as Record<string, unknown>);
      // Stopped (the cost cap, a cancel): read no further, even what the client has already buffered.
      if (signal.aborted) break;
    }
    // The SDK ends iteration quietly when the request is aborted; surface why.
    signal.throwIfAborted();
    return assembler.result();
  };

  /** One attempt: the request, then its `pause_turn` continuations, merged into one reply. */
  const attempt = async (
    request: ModelRequest,
    signal: AbortSignal,
    callbacks: Pick<CompleteOptions, "onDelta" | "onProgress" | "onOutput">,
  ): Promise<ModelResponse> => {
    const idle = watchStall(clock, {
      idleMs: idleTimeoutMs,
      idleMessage: (ms) => `the server sent nothing for ${formatDuration(ms)} (model.idle_timeout)`,
    });
    const touch = () => {
      idle.touch();
      callbacks.onProgress?.();
    };
    const stop = AbortSignal.any([signal, idle.signal]);
    try {
      const body = toWireRequest(request, wireOptions);
      let reply = await exchange(body, stop, touch, callbacks.onDelta, callbacks.onOutput);
      for (let n = 0; reply.stop_reason === "pause_turn" && n < maxContinuations; n++) {
        // The API paused a long turn: sending its reply back as it is lets the model go on from there.
        const next = await exchange(
          { ...body, messages: [...body.messages, { role: "assistant", content: reply.content as never }] },
          stop,
          touch,
          callbacks.onDelta,
          callbacks.onOutput,
        );
        reply = {
          content: [...reply.content, ...next.content],
          stop_reason: next.stop_reason,
          usage: sumUsage(reply.usage, next.usage),
        };
      }
      return fromWireResponse(reply, request);
    } catch (error) {
      throw stop.aborted ? stop.reason : error;
    } finally {
      await idle.stop();
    }
  };

  const name = options.name ?? "anthropic";
  const where = `Cannot complete model call to ${options.where ?? baseURL}`;
  return {
    name,
    complete(request: ModelRequest, callOptions: CompleteOptions = {}): Promise<ModelResponse> {
      return retryCall((signal, callbacks) => attempt(request, signal, callbacks), callOptions, {
        where,
        clock,
        ceilingMs,
        maxRetries,
        retryBaseMs,
        judge: (error, now) => judgeAnthropicError(error, { redact, now }),
      });
    },
  };
}

function sumUsage(a: WireResponse["usage"], b: WireResponse["usage"]): WireUsage | null {
  if (!a || !b) return a ?? b ?? null;
  const add = (x: number | null | undefined, y: number | null | undefined) => (x ?? 0) + (y ?? 0);
  return {
    input_tokens: add(a.input_tokens, b.input_tokens),
    output_tokens: add(a.output_tokens, b.output_tokens),
    cache_read_input_tokens: add(a.cache_read_input_tokens, b.cache_read_input_tokens),
    cache_creation_input_tokens: add(a.cache_creation_input_tokens, b.cache_creation_input_tokens),
  };
}
