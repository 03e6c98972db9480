/** Which model a run talks to: flag > job > config.yaml > environment > the provider's defaults. */
import { parseDuration } from "../core/duration.ts";
import { ValidationError } from "../core/errors.ts";
import { DEFAULT_CONTEXT_WINDOW, KEYLESS, type ResolvedModel } from "../providers/model.ts";
import { listedPrice, priceOf } from "../providers/pricing.ts";
import {
  type ModelSection,
  ownersOf,
  providerOf,
  type ProviderRegistry,
  PROVIDERS,
} from "../providers/registry.ts";
import type { ModelConfig } from "./job_schema.ts";

/** A `model:` section; `provider` is any name of the registry in use, other keys any provider's own. */
export type ModelSpec = Omit<ModelConfig, "provider"> & { provider?: string | undefined } & ModelSection;

/**
 * The shared keys resolved here; the provider's own keys by its registry entry (`resolve`), which no other
 * provider's keys may reach.
 */
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
  const section: ModelSection = spec ?? {};
  for (const [key, holds] of Object.entries(entry.needs ?? {})) {
    if (section[key] === undefined) {
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
    reasoning: spec?.reasoning ?? false,
    structured_output: spec?.structured_output ?? "auto",
    settings: {},
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
  // A provider's own settings (its registry entry's) are refused for any other provider.
  for (const [key, value] of Object.entries(section)) {
    const owners = value === undefined ? [] : ownersOf(key, registry);
    if (owners.length && !owners.includes(provider)) {
      throw new ValidationError(
        `model.${key} needs provider: ${owners.join(" or ")} (provider is ${provider})`,
      );
    }
  }
  // A job loaded from a file had these listed at their lines already; a model section given otherwise has not.
  const problem = entry.problems?.(section)[0];
  if (problem) throw new ValidationError(`model.${problem.key}: ${problem.problem}`);
  return entry.resolve ? entry.resolve(section, model, { dir: options.dir, env: options.env }) : model;
}
