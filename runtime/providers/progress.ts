/** A provider whose every call also reports streamed bytes to `onProgress` (a session's stall watch). */
import type { Provider } from "./provider.ts";

export function reportingProgress(provider: Provider, onProgress: () => void): Provider {
  return {
    name: provider.name,
    complete: (request, options = {}) =>
      provider.complete(request, {
        ...options,
        onProgress: () => {
          onProgress();
          options.onProgress?.();
        },
      }),
    ...(provider.serverWindow ? { serverWindow: provider.serverWindow.bind(provider) } : {}),
  };
}
