/** Which model a run talks to: flag > job > config.yaml > environment > the provider's defaults. */
import { parseDuration } from "../core/duration.ts";
import { ValidationError } from "../core/errors.ts";
import { DEFAULT_CONTEXT_WINDOW, isReasoningModel, KEYLESS, type ResolvedModel } from "../providers/model.ts";
import { listedPrice, priceOf } from "../providers/pricing.ts";
import { ownersOf, providerOf, type ProviderRegistry, PROVIDERS } from "../providers/registry.ts";
import type { ModelConfig } from "./job_schema.ts";

/** A `model:` section; `provider` is any name of the registry in use. */
export type ModelSpec = Omit<ModelConfig, "provider"> & { provider?: string | undefined };

export function resolveModel(
  spec: ModelSpec | undefined,
  options: {
    env: Record<string, string>;
    dir: string;
    override?: string | undefined;
    providers?: ProviderRegistry;
    /** The job's name when it runs on a schedule: its requests then share one `prompt_cache_key`. */
    recurringJob?: string | undefined;
  },
): ResolvedModel {
  const registry: ProviderRegistry = options.providers ?? PROVIDERS;
  const provider = providerOf(spec, registry);
  const entry = registry[provider];
  if (!entry) {
    throw new ValidationError(
      `Cannot use provider "${provider}": expected one of ${Object.keys(registry).join(", ")}`,
    );
  }
  const name = options.override ?? spec?.name ?? options.env.HERMES_MODEL ?? entry.defaultModel ?? "";
  if (!name) {
    throw new ValidationError(
      "Cannot choose a model: set model.name in the job, --model NAME, or HERMES_MODEL",
    );
  }
  for (const [key, holds] of Object.entries(entry.needs ?? {})) {
    if ((spec as Record<string, unknown> | undefined)?.[key] === undefined) {
      throw new ValidationError(`model.${key} is required for provider ${provider} (${holds})`);
    }
  }
  const model: ResolvedModel = {
    provider,
    name,
    base_url: spec?.base_url ?? (entry.baseUrlEnv === null ? undefined : options.env[entry.baseUrlEnv]) ??
      null,
    api_key_env: spec?.api_key_env ?? entry.apiKeyEnv ?? KEYLESS,
    context_window: spec?.context_window ?? DEFAULT_CONTEXT_WINDOW,
    stream: spec?.stream ?? false,
    price: spec?.pricing ? priceOf(spec.pricing) : listedPrice(name),
    reasoning: spec?.reasoning ?? (provider === "openai" && isReasoningModel(name)),
    structured_output: spec?.structured_output ?? "auto",
  };
  if (spec?.reasoning_effort !== undefined) model.reasoning_effort = spec.reasoning_effort;
  if (options.recurringJob !== undefined) model.prompt_cache_key = `hermes-job-${options.recurringJob}`;
  if (spec?.max_output_tokens !== undefined) model.max_output_tokens = spec.max_output_tokens;
  if (spec?.temperature !== undefined) model.temperature = spec.temperature;
  if (spec?.idle_timeout !== undefined) model.idle_timeout_ms = parseDuration(spec.idle_timeout);
  if (spec?.request_timeout !== undefined) model.request_timeout_ms = parseDuration(spec.request_timeout);
  if (spec?.max_retries !== undefined) model.max_retries = spec.max_retries;
  if (spec?.text_tool_calls) model.text_tool_calls = true;
  if (spec?.fallback !== undefined) model.fallback = [...spec.fallback];
  // A provider's own settings (registry ownKeys) are refused for any other provider.
  for (const [key, value] of Object.entries(spec ?? {})) {
    const owners = value === undefined ? [] : ownersOf(key, registry);
    if (owners.length && !owners.includes(provider)) {
      throw new ValidationError(
        `model.${key} needs provider: ${owners.join(" or ")} (provider is ${provider})`,
      );
    }
  }
  if (spec?.api_version !== undefined) model.api_version = spec.api_version;
  if (entry.ownKeys?.includes("api")) model.api = spec?.api ?? "auto";
  if (spec?.platform === "bedrock" || spec?.platform === "vertex") {
    // The cloud's own credentials sign the request: no Anthropic key, and not the Anthropic endpoint.
    model.platform = spec.platform;
    model.api_key_env = spec.api_key_env ?? KEYLESS;
    model.base_url = spec.base_url ?? null;
  }
  if (spec?.thinking) {
    if (spec.max_output_tokens !== undefined && spec.max_output_tokens <= spec.thinking.budget_tokens) {
      throw new ValidationError(
        `Cannot use model.thinking as given: max_output_tokens (${spec.max_output_tokens}) must be larger ` +
          `than thinking.budget_tokens (${spec.thinking.budget_tokens})`,
      );
    }
    model.thinking = { budget_tokens: spec.thinking.budget_tokens };
  }
  if (spec?.script !== undefined) {
    model.script = spec.script.startsWith("/") ? spec.script : `${options.dir}/${spec.script}`;
  }
  return model;
}
