/**
 * The model providers a job can name in `model.provider`, one entry each. Everything that depends on which
 * providers exist comes from here: the job schema's choices and their descriptions, the environment
 * variables read when a job names none, the `model` keys a provider cannot run without (and the default
 * provider when `model.provider` is absent), each provider's own `model` keys (their schemas and how they
 * resolve), and the factory. The implementation is imported only when a session uses it, so start-up loads
 * one provider and its SDK, not every one. Module paths stay static strings: `deno bundle` and
 * `deno compile` must see every implementation.
 *
 * Adding a provider is its module, exporting `providerFor` (see ProviderModule in provider.ts), plus one
 * entry below: its own `model` keys go in the entry's `settings` (validated by the job schema, located in
 * the job file) and `resolve` (what the module receives as `model.settings`). Nothing outside this folder
 * names a provider. A registry is a value: a test passes one with an entry of its own to the App
 * (`AppContext.providers`), or to the config loader, resolveModel and createProvider; PROVIDERS is the default.
 */
import type { z } from "zod";
import type { ProviderModule } from "./provider.ts";
import type { CredentialEnv } from "../core/redact.ts";
import { ValidationError } from "../core/errors.ts";
import { isReasoningModel, KEYLESS, type ResolvedModel } from "./model.ts";
import {
  OPENAI_API_DESCRIPTION,
  OPENAI_APIS,
  OPENAI_TRANSPORT_DESCRIPTION,
  OPENAI_TRANSPORTS,
  type OpenAIApiSetting,
  type OpenAITransport,
  transportProblem,
} from "./openai_api.ts";

/** The `model:` section as the job schema accepted it: the shared keys and the providers' own. */
export type ModelSection = Readonly<Record<string, unknown>>;

/**
 * One `model` key of a provider's own: its zod schema, built with the zod the job schema hands in (so this
 * module, read at start-up, does not load zod). Every own key is optional in the schema; `needs` makes one
 * required.
 */
export type SettingSchema = (zod: typeof z) => z.ZodType;

export interface ResolveContext {
  /** The job file's directory: relative paths in settings resolve against it. */
  readonly dir: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface ProviderEntry<S extends object = object> {
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
   * Its own `model` keys and their schemas: only this provider reads them, and a job that sets one for
   * another provider is refused before any call. Two providers may share a key (openai and azure: `api`)
   * when both give it the same schema.
   */
  readonly settings?: Readonly<Record<string, SettingSchema>>;
  /**
   * Own settings that name a file Hermes reads for the job, relative to the job file: judged by a trust
   * policy's read roots and protected like the job's own files.
   */
  readonly files?: readonly string[];
  /**
   * What its own keys' schemas cannot judge (one key against another), each named by the key it is about:
   * listed with the job's other problems at that key's line (`validate`, and before any call), so the
   * resolver never meets it.
   */
  readonly problems?: (spec: ModelSection) => { key: string; problem: string }[];
  /**
   * The resolved model with its own settings (`model.settings`), from the `model:` section and the model
   * the shared keys resolved to; it may change shared values (a cloud platform needs no API key). A bad
   * combination is a ValidationError. Absent: no settings.
   */
  readonly resolve?: (
    spec: ModelSection,
    model: ResolvedModel<object>,
    context: ResolveContext,
  ) => ResolvedModel<S>;
  readonly load: () => Promise<ProviderModule<S>>;
}

export type ProviderRegistry = Readonly<Record<string, ProviderEntry>>;

/**
 * An entry whose `resolve` and module agree on the settings' type `S` (checked here, inferred from the
 * module's `providerFor`); the registry holds entries of every `S`, so the type is dropped after the check.
 */
export function providerEntry<S extends object>(entry: ProviderEntry<S>): ProviderEntry {
  return entry as unknown as ProviderEntry;
}

/** `model.api`, read by the openai and azure providers alike. */
const openAIApi: SettingSchema = (zod) => zod.enum(OPENAI_APIS).describe(OPENAI_API_DESCRIPTION);
/** `model.transport`, the same for both; valid only with `api: responses`. */
const openAITransport: SettingSchema = (zod) =>
  zod.enum(OPENAI_TRANSPORTS).describe(OPENAI_TRANSPORT_DESCRIPTION);

/** `model.transport: websocket` without `model.api: responses`, for the openai and azure providers alike. */
function openAIProblems(spec: ModelSection): { key: string; problem: string }[] {
  const problem = transportProblem(spec);
  return problem === null ? [] : [{ key: "transport", problem }];
}

/** `model.api` and `model.transport` as the openai and azure providers read them (openAIProblems passed). */
function openAISettings(spec: ModelSection): { api: OpenAIApiSetting; transport?: OpenAITransport } {
  const transport = spec.transport as OpenAITransport | undefined;
  return {
    api: (spec.api as OpenAIApiSetting | undefined) ?? "auto",
    ...(transport !== undefined ? { transport } : {}),
  };
}

export const PROVIDERS = {
  openai: providerEntry({
    about: "any OpenAI-compatible Chat Completions endpoint, or OpenAI's Responses API (model.api)",
    apiKeyEnv: "OPENAI_API_KEY",
    baseUrlEnv: "OPENAI_BASE_URL",
    settings: { api: openAIApi, transport: openAITransport },
    problems: openAIProblems,
    resolve: (spec, model) => ({
      ...model,
      reasoning: spec.reasoning === undefined ? isReasoningModel(model.name) : model.reasoning,
      settings: openAISettings(spec),
    }),
    load: () => import("./openai.ts"),
  }),
  anthropic: providerEntry({
    about: "the Anthropic Messages API (Claude), prompt caching on",
    apiKeyEnv: "ANTHROPIC_API_KEY",
    baseUrlEnv: "ANTHROPIC_BASE_URL",
    settings: {
      thinking: (zod) =>
        zod.strictObject({
          budget_tokens: zod.number().int().min(1024).describe(
            "Most tokens the model may spend thinking per reply (at least 1024; max_output_tokens must be larger)",
          ),
        }).describe(
          "provider anthropic: extended thinking. Thinking blocks and their signatures are stored with the " +
            "assistant message and sent back unchanged in later requests, as tool rounds require",
        ),
      platform: (zod) =>
        zod.enum(["anthropic", "bedrock", "vertex"]).describe(
          "provider anthropic: where Claude runs — anthropic (the Anthropic API, default), bedrock (Amazon " +
            "Bedrock: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN or the AWS default chain, or " +
            "AWS_BEARER_TOKEN_BEDROCK; AWS_REGION), vertex (Google Vertex AI: CLOUD_ML_REGION, " +
            "ANTHROPIC_VERTEX_PROJECT_ID, Google application default credentials). No ANTHROPIC_API_KEY is " +
            "needed there; model.base_url replaces the region's endpoint",
        ),
    },
    // model.platform: bedrock and vertex (anthropic_platform.ts).
    credentialEnv: [
      { name: "AWS_BEARER_TOKEN_BEDROCK", form: "value" },
      { name: "AWS_SECRET_ACCESS_KEY", form: "value" },
      { name: "AWS_SESSION_TOKEN", form: "value" },
      { name: "GOOGLE_APPLICATION_CREDENTIALS", form: "credentials_file" },
    ],
    resolve(spec, model) {
      const thinking = spec.thinking as { budget_tokens: number } | undefined;
      if (
        thinking && model.max_output_tokens !== undefined && model.max_output_tokens <= thinking.budget_tokens
      ) {
        throw new ValidationError(
          `Cannot use model.thinking as given: max_output_tokens (${model.max_output_tokens}) must be larger ` +
            `than thinking.budget_tokens (${thinking.budget_tokens})`,
        );
      }
      const settings = thinking ? { thinking: { budget_tokens: thinking.budget_tokens } } : {};
      const platform = spec.platform === "anthropic"
        ? undefined
        : spec.platform as "bedrock" | "vertex" | undefined;
      if (platform === undefined) return { ...model, settings };
      // The cloud's own credentials sign the request: no Anthropic key, and not the Anthropic endpoint.
      return {
        ...model,
        api_key_env: (spec.api_key_env as string | undefined) ?? KEYLESS,
        base_url: (spec.base_url as string | undefined) ?? null,
        settings: { ...settings, platform },
      };
    },
    load: () => import("./anthropic.ts"),
  }),
  azure: providerEntry({
    about: "Azure OpenAI: model.name is the deployment, model.base_url the resource endpoint",
    apiKeyEnv: "AZURE_OPENAI_API_KEY",
    baseUrlEnv: "AZURE_OPENAI_ENDPOINT",
    settings: {
      api: openAIApi,
      transport: openAITransport,
      api_version: (zod) =>
        zod.string().min(1).describe(
          "provider azure: the Azure OpenAI api-version sent with every request (default: " +
            "AZURE_OPENAI_API_VERSION, else 2024-10-21, the current GA version, or 2025-04-01-preview for " +
            "model.api: responses); model.name is the deployment, model.base_url the resource endpoint " +
            "(https://NAME.openai.azure.com, default AZURE_OPENAI_ENDPOINT), the key AZURE_OPENAI_API_KEY",
        ),
    },
    problems: openAIProblems,
    resolve: (spec, model) => ({
      ...model,
      settings: {
        ...openAISettings(spec),
        ...(spec.api_version !== undefined ? { api_version: spec.api_version as string } : {}),
      },
    }),
    load: () => import("./azure.ts"),
  }),
  scripted: providerEntry({
    about: "canned replies from model.script (offline runs, tests)",
    apiKeyEnv: null,
    baseUrlEnv: null,
    defaultModel: "scripted",
    needs: { script: "a replies file" },
    settings: {
      script: (zod) =>
        zod.string().min(1).describe(
          "provider: scripted: the replies file (YAML or JSON), relative to the job file",
        ),
    },
    files: ["script"],
    resolve(spec, model, context) {
      const script = spec.script as string;
      return { ...model, settings: { script: script.startsWith("/") ? script : `${context.dir}/${script}` } };
    },
    load: () => import("./scripted.ts"),
  }),
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
  const set = (key: string) => (spec as ModelSection | undefined)?.[key] !== undefined;
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

/** The providers that read a `model` key of their own (ProviderEntry.settings); empty for a shared key. */
export function ownersOf(key: string, registry: ProviderRegistry = PROVIDERS): string[] {
  return Object.entries(registry).filter(([, entry]) => Object.hasOwn(entry.settings ?? {}, key))
    .map(([name]) => name);
}

/**
 * The schemas of every provider's own `model` keys, optional, in registry order, for the job schema to add to
 * the shared ones. A key two providers own must have one schema: a programming error otherwise.
 */
export function settingsShape(
  zod: typeof z,
  registry: ProviderRegistry = PROVIDERS,
): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  const from: Record<string, SettingSchema> = {};
  for (const [name, entry] of Object.entries(registry)) {
    for (const [key, schema] of Object.entries(entry.settings ?? {})) {
      if (from[key] !== undefined && from[key] !== schema) {
        throw new Error(`provider ${name} gives model.${key} a schema of its own; another provider owns it`);
      }
      from[key] = schema;
      shape[key] ??= schema(zod).optional();
    }
  }
  return shape;
}

/** The settings of the `model:` section that name files Hermes reads for the job (ProviderEntry.files). */
export function settingFiles(
  spec: ModelSection | undefined,
  registry: ProviderRegistry = PROVIDERS,
): { key: string; value: string }[] {
  const keys = new Set(Object.values(registry).flatMap((entry) => entry.files ?? []));
  return [...keys].flatMap((key) =>
    typeof spec?.[key] === "string" ? [{ key, value: spec[key] as string }] : []
  );
}
