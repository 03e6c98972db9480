/**
 * A resolved `model:` (runtime/config/model.ts resolves it, each provider's registry entry its own settings):
 * the shared types and helpers every provider and the session read. It imports no provider and not the
 * registry, so an implementation can import it without closing a circle.
 */
import { ValidationError } from "../core/errors.ts";
import { type Price, priceKey, PRICES_TAKEN } from "./pricing.ts";

export const DEFAULT_CONTEXT_WINDOW = 128_000;
/** `api_key_env: none`: the server takes no key (a local llama.cpp, vLLM, Ollama, a test server). */
export const KEYLESS = "none";

/**
 * A model call's bounds where the job sets none (`model.idle_timeout`, `model.request_timeout`,
 * `model.max_retries`), for every provider (retry_call.ts), the summary calls and the owner lease's
 * progress bound alike; `retryBaseMs` is the first backoff when the server names no retry-after.
 */
export const CALL_DEFAULTS = {
  idleTimeoutMs: 120_000,
  ceilingMs: 600_000,
  maxRetries: 3,
  retryBaseMs: 500,
} as const;

/**
 * The model a session talks to: the keys every provider shares, plus `settings`, what the provider's own keys
 * resolved to (its registry entry's `resolve`; `S` is that provider's type of them).
 */
export interface ResolvedModel<S extends object = object> {
  /** A name in the provider registry. */
  provider: string;
  name: string;
  base_url: string | null;
  /** The variable holding the API key, or `none` (KEYLESS). */
  api_key_env: string;
  context_window: number;
  max_output_tokens?: number;
  temperature?: number;
  stream: boolean;
  /** model.idle_timeout: no byte for this long stalls a model call (agent and summary calls). */
  idle_timeout_ms?: number;
  /** model.request_timeout: the ceiling of one model call. */
  request_timeout_ms?: number;
  max_retries?: number;
  /** `model.fallback`: models tried in order, for the same request, on overload or a rate limit. */
  fallback?: string[];
  /** model.text_tool_calls: tool calls written in the answer's text are recognised. */
  text_tool_calls?: boolean;
  /** USD per million tokens: `model.pricing`, else the price table's entry; null when neither knows it. */
  price: Price | null;
  /** An OpenAI reasoning model (`model.reasoning`, else by its name): max_completion_tokens, no temperature. */
  reasoning: boolean;
  reasoning_effort?: "minimal" | "low" | "medium" | "high";
  /** How `output.schema` is asked for (`model.structured_output`, default auto). */
  structured_output: "auto" | "native" | "prompt";
  /** Sent as `prompt_cache_key`: the same for every run of a recurring job, so they share the cache. */
  prompt_cache_key?: string;
  /** The provider's own settings, as its registry entry resolved them (empty for a provider with none). */
  settings: S;
}

/**
 * The OpenAI reasoning models, by name as the SDKs' users tell them (LangChain, LiteLLM): the o-series and
 * the gpt-5 family, except its chat models (`gpt-5-chat-latest`), which take the classic parameters.
 */
export function isReasoningModel(name: string): boolean {
  const key = priceKey(name);
  return /^o[1-9](-|$)/.test(key) || (/^gpt-5(\.\d+)?(-|$)/.test(key) && !/chat/.test(key));
}

/** A cost limit needs the model's price: without one it could never be enforced (exit 2 before any call). */
export function requirePrice(model: ResolvedModel<object>): void {
  if (model.price !== null) return;
  throw new ValidationError(
    `Cannot enforce limits.max_cost_usd (--max-budget-usd): model "${model.name}" has no known price ` +
      `(the price table of ${PRICES_TAKEN} does not list it); set model.pricing: {input, output} in USD per ` +
      "million tokens",
  );
}

/** A model call's bounds as the providers take them: idle timeout, ceiling and retries, where the job sets them. */
export function callBounds(
  model: ResolvedModel<object>,
): { idleTimeoutMs?: number; ceilingMs?: number; maxRetries?: number } {
  return {
    ...(model.idle_timeout_ms ? { idleTimeoutMs: model.idle_timeout_ms } : {}),
    ...(model.request_timeout_ms ? { ceilingMs: model.request_timeout_ms } : {}),
    ...(model.max_retries !== undefined ? { maxRetries: model.max_retries } : {}),
  };
}
