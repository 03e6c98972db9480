/**
 * The `azure` provider: Azure OpenAI through the `openai` SDK's `AzureOpenAI` client. `model.name` is the
 * deployment (the request goes to `{base_url}/openai/deployments/{name}/chat/completions?api-version=…`, or
 * with `model.api: responses` to `{base_url}/openai/responses?api-version=…`, the deployment in the body),
 * `model.base_url` the resource endpoint (https://NAME.openai.azure.com, else AZURE_OPENAI_ENDPOINT), the key
 * AZURE_OPENAI_API_KEY sent as the `api-key` header. Requests, replies, streaming, retries and errors are
 * the openai provider's: only the client differs.
 */
import { AzureOpenAI } from "./openai_sdk.ts";
import { ValidationError } from "../core/errors.ts";
import type { ResolvedModel } from "./model.ts";
import { createOpenAIProvider, openAIOptions, type OpenAISettings } from "./openai.ts";
import type { Provider, ProviderContext } from "./provider.ts";

/** The Azure OpenAI data-plane API version sent when neither model.api_version nor the environment names one. */
export const DEFAULT_AZURE_API_VERSION = "2024-10-21";
/** The same for the Responses API (`model.api`), which the GA version above does not serve. */
export const DEFAULT_AZURE_RESPONSES_API_VERSION = "2025-04-01-preview";

/** The azure provider's own settings: the openai provider's and the data-plane `api-version`. */
export interface AzureSettings extends OpenAISettings {
  /** `model.api_version`. */
  api_version?: string;
}

export function providerFor(model: ResolvedModel<AzureSettings>, context: ProviderContext): Provider {
  const endpoint = model.base_url?.replace(/\/+$/, "");
  if (!endpoint) {
    throw new ValidationError(
      "Cannot use provider azure: set model.base_url to the resource endpoint (https://NAME.openai.azure.com) " +
        "or AZURE_OPENAI_ENDPOINT",
    );
  }
  const apiVersion = model.settings.api_version ?? context.env.AZURE_OPENAI_API_VERSION;
  // The openai provider settles every option from the resolved model; only the client is Azure's.
  return createOpenAIProvider({
    ...openAIOptions(model, context),
    name: "azure",
    baseURL: endpoint,
    client: (options, api) =>
      new AzureOpenAI({
        ...options,
        // Chat: the deployment is the request's model, a model.fallback deployment gets its own URL. The
        // Responses API has one route for the resource, the deployment named in the body.
        baseURL: `${endpoint}/openai`,
        apiKey: context.apiKey ?? "",
        apiVersion: apiVersion ??
          (api === "responses" ? DEFAULT_AZURE_RESPONSES_API_VERSION : DEFAULT_AZURE_API_VERSION),
      }),
  });
}
