/** Builds the provider a resolved model names, from its registry entry: only that provider's module (and SDK) is imported. */
import type { Clock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import { KEYLESS, type ResolvedModel } from "./model.ts";
import type { Provider } from "./provider.ts";
import { type ProviderRegistry, PROVIDERS } from "./registry.ts";

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
  // Each wrapper's module is loaded only for a model that has it.
  const calls = model.text_tool_calls
    ? (await import("./text_tool_calls.ts")).withTextToolCalls(provider)
    : provider;
  return model.fallback?.length ? (await import("./fallback.ts")).withFallback(calls, model.fallback) : calls;
}
