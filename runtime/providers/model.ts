/** A resolved `model:` (runtime/config/model.ts resolves it) and the provider it asks for. */
import type { Clock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import type { Provider } from "./provider.ts";
import { type ProviderRegistry, PROVIDERS } from "./registry.ts";
import { withTextToolCalls } from "./text_tool_calls.ts";
import { type Price, priceKey, PRICES_TAKEN } from "./pricing.ts";
import { withFallback } from "./fallback.ts";
import type { OpenAIApiSetting } from "./openai_api.ts";

export const DEFAULT_CONTEXT_WINDOW = 128_000;
/** `api_key_env: none`: the server takes no key (a local llama.cpp, vLLM, Ollama, a test server). */
export const KEYLESS = "none";

export interface ResolvedModel {
  /** A name in the provider registry. */
  provider: string;
  name: string;
  base_url: string | null;
  /** The variable holding the API key, or `none` (KEYLESS). */
  api_key_env: string;
  context_window: number;
  max_output_tokens?: number;
  temperature?: number;
  /** Absolute path of the scripted replies. */
  script?: string;
  stream: boolean;
  /** model.idle_timeout: no byte for this long stalls a model call (agent and summary calls). */
  idle_timeout_ms?: number;
  /** model.request_timeout: the ceiling of one model call. */
  request_timeout_ms?: number;
  max_retries?: number;
  /** providers openai and azure: Chat Completions, the Responses API, or by the model's name (`model.api`). */
  api?: OpenAIApiSetting;
  /** provider azure: the data-plane `api-version` (`model.api_version`). */
  api_version?: string;
  /** `model.fallback`: models tried in order, for the same request, on overload or a rate limit. */
  fallback?: string[];
  /** provider anthropic: extended thinking. */
  thinking?: { budget_tokens: number };
  /** model.text_tool_calls: tool calls written in the answer's text are recognised. */
  text_tool_calls?: boolean;
  /** provider anthropic: Claude on Amazon Bedrock or Google Vertex AI instead of the Anthropic API. */
  platform?: "bedrock" | "vertex";
  /** USD per million tokens: `model.pricing`, else the price table's entry; null when neither knows it. */
  price: Price | null;
  /** An OpenAI reasoning model (`model.reasoning`, else by its name): max_completion_tokens, no temperature. */
  reasoning: boolean;
  reasoning_effort?: "minimal" | "low" | "medium" | "high";
  /** How `output.schema` is asked for (`model.structured_output`, default auto). */
  structured_output: "auto" | "native" | "prompt";
  /** Sent as `prompt_cache_key`: the same for every run of a recurring job, so they share the cache. */
  prompt_cache_key?: string;
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
export function requirePrice(model: ResolvedModel): void {
  if (model.price !== null) return;
  throw new ValidationError(
    `Cannot enforce limits.max_cost_usd (--max-budget-usd): model "${model.name}" has no known price ` +
      `(the price table of ${PRICES_TAKEN} does not list it); set model.pricing: {input, output} in USD per ` +
      "million tokens",
  );
}

/** Builds the provider from its registry entry; only that provider's module (and SDK) is imported. */
export async function createProvider(
  model: ResolvedModel,
  options: { env: Record<string, string>; clock: Clock; providers?: ProviderRegistry },
): Promise<Provider> {
  const registry: ProviderRegistry = options.providers ?? PROVIDERS;
  const entry = registry[model.provider];
  if (!entry) {
    throw new ValidationError(
      `Cannot use provider "${model.provider}": expected one of ${Object.keys(registry).join(", ")}`,
    );
  }
  const keyless = entry.apiKeyEnv === null || model.api_key_env === KEYLESS;
  const apiKey = keyless ? null : options.env[model.api_key_env];
  if (!keyless && !apiKey) {
    // Before any request: a request without its key fails later, and far less clearly.
    throw new ValidationError(
      `Cannot call the model: ${model.api_key_env} (model.api_key_env) is not set; set it, or ` +
        `api_key_env: ${KEYLESS} for a server that takes no key`,
    );
  }
  const module = await entry.load();
  const provider = module.providerFor(model, {
    apiKey: apiKey ?? null,
    clock: options.clock,
    env: options.env,
  });
  const calls = model.text_tool_calls ? withTextToolCalls(provider) : provider;
  return model.fallback?.length ? withFallback(calls, model.fallback) : calls;
}

/** A model call's bounds as the providers take them: idle timeout, ceiling and retries, where the job sets them. */
export function callBounds(
  model: ResolvedModel,
): { idleTimeoutMs?: number; ceilingMs?: number; maxRetries?: number } {
  return {
    ...(model.idle_timeout_ms ? { idleTimeoutMs: model.idle_timeout_ms } : {}),
    ...(model.request_timeout_ms ? { ceilingMs: model.request_timeout_ms } : {}),
    ...(model.max_retries !== undefined ? { maxRetries: model.max_retries } : {}),
  };
}
