/**
 * A toy provider, the whole of what a new provider is besides its registry entry (registry_test.ts adds
 * that entry, with the toy's one setting of its own, `model.greeting`): its module exports `providerFor`. It
 * calls the first tool it is offered once, then answers with its greeting, what the tool returned, the model
 * it was asked for, its endpoint and whether it got its key.
 */
import type { ResolvedModel } from "../model.ts";
import type { ModelRequest, ModelResponse, Provider, ProviderContext } from "../provider.ts";

/** The toy's own settings, as its registry entry resolves them. */
export interface ToySettings {
  /** `model.greeting`: the first word of every answer. */
  greeting: string;
}

export function providerFor(model: ResolvedModel<ToySettings>, context: ProviderContext): Provider {
  return {
    name: "toy",
    complete(request: ModelRequest): Promise<ModelResponse> {
      const last = request.messages.at(-1)!;
      const tool = request.tools[0];
      const usage = { prompt_tokens: 10, completion_tokens: 2, cached_tokens: 0 };
      if (last.role === "user" && tool) {
        const call = { id: "toy_1", name: tool.name, arguments: JSON.stringify({ text: last.content }) };
        return Promise.resolve({
          message: { role: "assistant", content: "", tool_calls: [call] },
          usage,
          finish_reason: "tool_calls",
        });
      }
      const key = context.apiKey === null ? "no key" : "a key";
      const content =
        `${model.settings.greeting}, ${model.name} at ${model.base_url} with ${key}: ${last.content}`;
      return Promise.resolve({ message: { role: "assistant", content }, usage, finish_reason: "stop" });
    },
  };
}
