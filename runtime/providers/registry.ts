/**
 * The model providers a job can name in `model.provider`, one entry each. Everything that depends on which
 * providers exist comes from here: the job schema's choices and their descriptions, the environment
 * variables read when a job names none, the `model` keys a provider cannot run without (and the default
 * provider when `model.provider` is absent), and the factory. The implementation is imported only when a
 * session uses it, so start-up loads one provider and its SDK, not every one. Module paths stay static
 * strings: `deno bundle` and `deno compile` must see every implementation.
 *
 * Adding a provider is its module, exporting `providerFor` (see ProviderModule in provider.ts), plus one
 * entry below.
 */
import type { ProviderModule } from "./provider.ts";
import type { CredentialEnv } from "../core/redact.ts";

export interface ProviderEntry {
  /** What it talks to, for the job schema's description of `model.provider`. */
  readonly about: string;
  /** The variable holding the API key when the job sets no `model.api_key_env`; null: it takes no key. */
  readonly apiKeyEnv: string | null;
  /** The variable naming the endpoint when the job sets no `model.base_url`; null: none is read. */
  readonly baseUrlEnv: string | null;
  /**
   * Every other variable the provider (or the SDK it hands them to) reads a credential from: redacted in
   * every session, whatever its name, like `apiKeyEnv`.
   */
  readonly credentialEnv?: readonly CredentialEnv[];
  /** `model.name` when neither --model, the job nor HERMES_MODEL names one; absent: a name is required. */
  readonly defaultModel?: string;
  /**
   * `model` keys it cannot run without, each with what it holds. A `model:` that sets one of them and
   * names no provider means this one.
   */
  readonly needs?: Readonly<Record<string, string>>;
  /**
   * `model` keys that only the providers listing them read (their own settings); a job that sets one for
   * another provider is refused before any call.
   */
  readonly ownKeys?: readonly string[];
  readonly load: () => Promise<ProviderModule>;
}

export type ProviderRegistry = Readonly<Record<string, ProviderEntry>>;

export const PROVIDERS = {
  openai: {
    about: "any OpenAI-compatible Chat Completions endpoint, or OpenAI's Responses API (model.api)",
    apiKeyEnv: "OPENAI_API_KEY",
    baseUrlEnv: "OPENAI_BASE_URL",
    ownKeys: ["api"],
    load: () => import("./openai.ts"),
  },
  anthropic: {
    about: "the Anthropic Messages API (Claude), prompt caching on",
    apiKeyEnv: "ANTHROPIC_API_KEY",
    baseUrlEnv: "ANTHROPIC_BASE_URL",
    ownKeys: ["thinking", "platform"],
    // model.platform: bedrock and vertex (anthropic_platform.ts).
    credentialEnv: [
      { name: "AWS_BEARER_TOKEN_BEDROCK", form: "value" },
      { name: "AWS_SECRET_ACCESS_KEY", form: "value" },
      { name: "AWS_SESSION_TOKEN", form: "value" },
      { name: "GOOGLE_APPLICATION_CREDENTIALS", form: "credentials_file" },
    ],
    load: () => import("./anthropic.ts"),
  },
  azure: {
    about: "Azure OpenAI: model.name is the deployment, model.base_url the resource endpoint",
    apiKeyEnv: "AZURE_OPENAI_API_KEY",
    baseUrlEnv: "AZURE_OPENAI_ENDPOINT",
    ownKeys: ["api", "api_version"],
    load: () => import("./azure.ts"),
  },
  scripted: {
    about: "canned replies from model.script (offline runs, tests)",
    apiKeyEnv: null,
    baseUrlEnv: null,
    defaultModel: "scripted",
    needs: { script: "a replies file" },
    load: () => import("./scripted.ts"),
  },
} as const satisfies ProviderRegistry;

export type ProviderName = keyof typeof PROVIDERS;

/** The provider of a `model:` that names none and sets no key another provider needs. */
export const DEFAULT_PROVIDER: ProviderName = "openai";

/** The names a job may give `model.provider`, in registry order. */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [ProviderName, ...ProviderName[]];

/** The provider a `model:` section means: the one it names, else the one whose needed key it sets, else the default. */
export function providerOf(
  spec: { readonly provider?: string | undefined } | undefined,
  registry: ProviderRegistry = PROVIDERS,
): string {
  if (spec?.provider !== undefined) return spec.provider;
  const set = (key: string) => (spec as Record<string, unknown> | undefined)?.[key] !== undefined;
  const implied = Object.entries(registry).find(([, entry]) => Object.keys(entry.needs ?? {}).some(set));
  return implied?.[0] ?? DEFAULT_PROVIDER;
}

/** "OPENAI_API_KEY for openai, …": the variable each provider reads for one setting (schema descriptions). */
export function defaultsOf(
  setting: "apiKeyEnv" | "baseUrlEnv",
  options: { prefix?: string; registry?: ProviderRegistry } = {},
): string {
  const prefix = options.prefix ?? "";
  return Object.entries(options.registry ?? PROVIDERS)
    .flatMap(([name, entry]) => entry[setting] === null ? [] : [`${prefix}${entry[setting]} for ${name}`])
    .join(", ");
}

/** The providers that read a `model` key of their own (ProviderEntry.ownKeys); empty for a shared key. */
export function ownersOf(key: string, registry: ProviderRegistry = PROVIDERS): string[] {
  return Object.entries(registry).filter(([, entry]) => entry.ownKeys?.includes(key)).map(([name]) => name);
}
