/**
 * Which OpenAI API a model is asked through (`model.api`, providers openai and azure): Chat Completions, the
 * Responses API, or `auto`, which picks Responses for the models that answer nowhere else and Chat
 * Completions for every other (what any OpenAI-compatible server speaks). Pure: the job schema and the
 * model resolution read it without loading the SDK.
 */
import { priceKey } from "./pricing.ts";

export const OPENAI_APIS = ["chat", "responses", "auto"] as const;
export type OpenAIApiSetting = typeof OPENAI_APIS[number];
export type OpenAIApi = Exclude<OpenAIApiSetting, "auto">;

/**
 * The models OpenAI serves on the Responses API only, by name (a router's prefix and a snapshot suffix
 * aside): the Codex family (gpt-5-codex, gpt-5.1-codex, -mini, -max, codex-mini), the pro models (o1-pro,
 * o3-pro, gpt-5-pro, gpt-5.x-pro), deep research and computer use.
 */
const RESPONSES_ONLY =
  /^(?:gpt-5(?:\.\d+)?-codex(?:-mini|-max)?|codex-mini|o[13]-pro|gpt-5(?:\.\d+)?-pro|o[34](?:-mini)?-deep-research|computer-use-preview)$/;

export function isResponsesOnly(model: string): boolean {
  return RESPONSES_ONLY.test(priceKey(model));
}

/** The API a request for `model` goes to under the setting (`auto`: by the model's name). */
export function apiFor(setting: OpenAIApiSetting, model: string): OpenAIApi {
  if (setting !== "auto") return setting;
  return isResponsesOnly(model) ? "responses" : "chat";
}

export const OPENAI_API_DESCRIPTION =
  "providers openai and azure: the API asked — chat (Chat Completions, what every OpenAI-compatible server " +
  "speaks), responses (the Responses API: reasoning items kept across tool rounds and resumes, stateless " +
  "with store: false), auto (default: responses for the models served only there — the Codex family, " +
  "o1-pro, o3-pro, gpt-5-pro — chosen per request, so a model.fallback model gets its own; chat otherwise)";

/** How Responses API calls travel (`model.transport`). */
export const OPENAI_TRANSPORTS = ["http", "websocket"] as const;
export type OpenAITransport = typeof OPENAI_TRANSPORTS[number];

export const OPENAI_TRANSPORT_DESCRIPTION =
  "providers openai and azure, for models asked on the Responses API (model.api: responses, or auto with a model served only there): how each model call travels — http (default, " +
  "one request per call) or websocket (the Responses API's WebSocket mode: one connection per session, each " +
  "call a response.create event answered by the streamed events; a call that only adds to the previous one " +
  "sends just the new items with previous_response_id; a dropped connection is opened again and the call " +
  "retried like a failed request)";

/**
 * Why a `model:` cannot use `transport` as given, or null: the WebSocket mode is the Responses API's, so the
 * model must be asked there — `api: responses`, or `auto` for a model served only there (a fallback model
 * that `auto` sends to Chat Completions travels over HTTP).
 */
export function transportProblem(
  spec: Readonly<Record<string, unknown>> | undefined,
): string | null {
  if (spec?.transport !== "websocket" || spec.api === "responses") return null;
  const api = spec.api ?? "auto";
  if (api === "auto" && typeof spec.name === "string" && isResponsesOnly(spec.name)) return null;
  return `transport websocket needs the Responses API: model.api: responses, or auto with a model served only ` +
    `there (api is ${spec.api ?? "auto, the default"}, model ${String(spec.name ?? "unset")})`;
}
