/** The model-provider seam. Implementations are listed in providers/registry.ts. */
import type { Clock } from "../core/clock.ts";
import { RunError } from "../core/errors.ts";
import type { Message, ToolSpec, Usage } from "../core/types.ts";
import type { ResolvedModel } from "./model.ts";
import { type FailureKind, isRateLimited } from "./overload.ts";

export interface ModelRequest {
  model: string;
  messages: Message[];
  tools: ToolSpec[];
  max_tokens?: number;
  temperature?: number;
  /**
   * The job's `output.schema`, when the provider is to enforce it natively (`model.structured_output` auto or
   * native): OpenAI `response_format` json_schema, Anthropic a forced answer tool. The final answer is then
   * the JSON text of the structured value.
   */
  output_schema?: OutputSchema;
}

export interface OutputSchema {
  /** A name for the schema (`[a-zA-Z0-9_-]`, at most 64 characters). */
  name: string;
  schema: Record<string, unknown>;
}

export interface ModelResponse {
  /** Always role `assistant`; `content` may be "" when the model only calls tools. */
  message: Message;
  usage: Usage | null;
  finish_reason: string;
}

export interface RetryInfo {
  attempt: number;
  delay_ms: number;
  status: number | null;
  error: string;
  /** The model the next attempt asks for, when it is a `model.fallback` one. */
  model?: string;
}

export interface CompleteOptions {
  signal?: AbortSignal;
  /** Called before each retry sleep; the runner turns it into a `provider.retry` event. */
  onRetry?: (info: RetryInfo) => void;
  /** Streamed text as it arrives (only when the provider streams). */
  onDelta?: (text: string) => void;
  /** Bytes of the response arrived (headers or body, streaming or not): the call is making progress. */
  onProgress?: () => void;
  /** Characters of the reply as they stream in (text, tool-call arguments, reasoning): spend while it runs. */
  onOutput?: (chars: number) => void;
}

/** A context window the server itself reports, and where it came from (for the log line). */
export interface ServerWindow {
  tokens: number;
  source: string;
}

export interface Provider {
  readonly name: string;
  complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelResponse>;
  /**
   * The context window the server runs, where it can tell cheaply (a local llama.cpp or Ollama); null when
   * it cannot. Asked once per session, before its first model call.
   */
  serverWindow?(options?: { signal?: AbortSignal }): Promise<ServerWindow | null>;
  /** Releases what the provider keeps open between calls (a WebSocket); called once, when the session ends. */
  close?(): Promise<void>;
}

/**
 * What a provider's module exports for the registry (providers/registry.ts); `S` is the type of its own
 * settings, as its registry entry resolves them.
 */
export interface ProviderModule<S extends object = object> {
  /** The provider a resolved `model:` asks for; a setting it cannot use is a ValidationError. */
  providerFor(model: ResolvedModel<S>, context: ProviderContext): Provider;
}

export interface ProviderContext {
  /** The value of `model.api_key_env`, checked to be set; null when the server or provider takes no key. */
  apiKey: string | null;
  clock: Clock;
  /** The process environment snapshot, for settings a provider reads beyond its key and endpoint. */
  env: Readonly<Record<string, string>>;
}

/**
 * A provider failure after retries; `contextOverflow` marks a request rejected as too long, and
 * `contextLimit` the limit the error message named, when it named one. `kind` classifies it (overload.ts):
 * a rate limit, quota or overload ends the run `rate_limited`, anything else `provider_error`.
 */
export class ProviderError extends RunError {
  readonly status: number | null;
  readonly contextOverflow: boolean;
  readonly contextLimit: number | null;
  readonly kind: FailureKind | null;
  constructor(
    message: string,
    options: {
      status?: number | null;
      contextOverflow?: boolean;
      contextLimit?: number | null;
      kind?: FailureKind | null;
      cause?: unknown;
    } = {},
  ) {
    super(message, {
      ...(isRateLimited(options.kind ?? null) ? { reason: "rate_limited" } : { reason: "provider_error" }),
      cause: options.cause,
    });
    this.name = "ProviderError";
    this.status = options.status ?? null;
    this.contextOverflow = options.contextOverflow ?? false;
    this.contextLimit = options.contextLimit ?? null;
    this.kind = options.kind ?? null;
  }
}
