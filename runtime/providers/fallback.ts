/**
 * `model.fallback`: when a request's model is overloaded or rate-limited after its retries, the same request
 * goes to the next model of the list, on the same provider and endpoint. Every request starts with the
 * job's model again: the fallback covers a burst, it does not stick. A reply whose text began to stream is
 * never sent again (text handed on cannot be taken back), and each switch is reported through `onRetry`
 * naming the model (a `provider.retry` event).
 */
import { isFallbackFailure } from "./overload.ts";
import { type CompleteOptions, type ModelRequest, type Provider, ProviderError } from "./provider.ts";

export function withFallback(provider: Provider, models: readonly string[]): Provider {
  const wrapped: Provider = {
    name: provider.name,
    async complete(request: ModelRequest, options: CompleteOptions = {}) {
      const chain = [request.model, ...models.filter((model) => model !== request.model)];
      let streamed = false;
      const onDelta = options.onDelta &&
        ((text: string) => {
          streamed = true;
          options.onDelta!(text);
        });
      for (let index = 0;; index++) {
        try {
          return await provider.complete(
            { ...request, model: chain[index]! },
            { ...options, ...(onDelta ? { onDelta } : {}) },
          );
        } catch (error) {
          const next = chain[index + 1];
          const switchable = error instanceof ProviderError && isFallbackFailure(error.kind);
          if (next === undefined || !switchable || streamed || options.signal?.aborted) throw error;
          options.onRetry?.({
            attempt: index + 1,
            delay_ms: 0,
            status: error.status,
            error: `${error.message}; trying model.fallback ${next}`,
            model: next,
          });
        }
      }
    },
  };
  if (provider.serverWindow) wrapped.serverWindow = (options) => provider.serverWindow!(options);
  if (provider.close) wrapped.close = () => provider.close!();
  return wrapped;
}
