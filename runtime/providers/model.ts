/** Which model a run talks to: flag > job > config.yaml > environment > default (docs/job-file.md). */
import type { Clock } from "../core/clock.ts";
import { parseDuration } from "../core/duration.ts";
import { ValidationError } from "../core/errors.ts";
import type { ModelConfig } from "../config/job_schema.ts";
import type { Provider } from "./provider.ts";

export const DEFAULT_CONTEXT_WINDOW = 128_000;
/** `api_key_env: none`: the server takes no key (a local llama.cpp, vLLM, Ollama, a test server). */
export const KEYLESS = "none";

export interface ResolvedModel {
  provider: "openai" | "scripted";
  name: string;
  base_url: string | null;
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
}

export function resolveModel(
  spec: ModelConfig | undefined,
  options: { env: Record<string, string>; dir: string; override?: string | undefined },
): ResolvedModel {
  const provider = spec?.provider ?? (spec?.script ? "scripted" : "openai");
  const name = options.override ?? spec?.name ?? options.env.HERMES_MODEL ??
    (provider === "scripted" ? "scripted" : "");
  if (!name) {
    throw new ValidationError(
      "Cannot choose a model: set model.name in the job, --model NAME, or HERMES_MODEL",
    );
  }
  const model: ResolvedModel = {
    provider,
    name,
    base_url: spec?.base_url ?? options.env.OPENAI_BASE_URL ?? null,
    api_key_env: spec?.api_key_env ?? "OPENAI_API_KEY",
    context_window: spec?.context_window ?? DEFAULT_CONTEXT_WINDOW,
    stream: spec?.stream ?? false,
  };
  if (spec?.max_output_tokens !== undefined) model.max_output_tokens = spec.max_output_tokens;
  if (spec?.temperature !== undefined) model.temperature = spec.temperature;
  if (spec?.idle_timeout !== undefined) model.idle_timeout_ms = parseDuration(spec.idle_timeout);
  if (spec?.request_timeout !== undefined) model.request_timeout_ms = parseDuration(spec.request_timeout);
  if (spec?.max_retries !== undefined) model.max_retries = spec.max_retries;
  if (provider === "scripted") {
    if (!spec?.script) throw new ValidationError("model.script is required for provider scripted");
    model.script = spec.script.startsWith("/") ? spec.script : `${options.dir}/${spec.script}`;
  }
  return model;
}

/** Builds the provider; the OpenAI client is imported only when it is used. */
export async function createProvider(
  model: ResolvedModel,
  options: { env: Record<string, string>; clock: Clock },
): Promise<Provider> {
  if (model.provider === "scripted") {
    const { createScriptedProvider, loadScript } = await import("./scripted.ts");
    return createScriptedProvider(loadScript(model.script!), { clock: options.clock });
  }
  const apiKey = model.api_key_env === KEYLESS ? "" : options.env[model.api_key_env];
  if (model.api_key_env !== KEYLESS && !apiKey) {
    // Before any request: a request without its key fails later, and far less clearly.
    throw new ValidationError(
      `Cannot call the model: ${model.api_key_env} (model.api_key_env) is not set; set it, or ` +
        `api_key_env: ${KEYLESS} for a server that takes no key`,
    );
  }
  const { createOpenAIProvider } = await import("./openai.ts");
  return createOpenAIProvider({
    model: model.name,
    // The SDK insists on a key; a keyless server ignores this one.
    apiKey: apiKey || "not-needed",
    stream: model.stream,
    clock: options.clock,
    ...(model.base_url ? { baseURL: model.base_url } : {}),
    ...(model.idle_timeout_ms ? { idleTimeoutMs: model.idle_timeout_ms } : {}),
    ...(model.request_timeout_ms ? { ceilingMs: model.request_timeout_ms } : {}),
    ...(model.max_retries !== undefined ? { maxRetries: model.max_retries } : {}),
  });
}
