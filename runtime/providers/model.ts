/** A resolved `model:` (runtime/config/model.ts resolves it) and the provider it asks for. */
import type { Clock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import type { Provider } from "./provider.ts";
import { type ProviderRegistry, PROVIDERS } from "./registry.ts";

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
  /** provider anthropic: extended thinking. */
  thinking?: { budget_tokens: number };
  /** provider anthropic: Claude on Amazon Bedrock or Google Vertex AI instead of the Anthropic API. */
  platform?: "bedrock" | "vertex";
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
  return module.providerFor(model, { apiKey: apiKey ?? null, clock: options.clock, env: options.env });
}
