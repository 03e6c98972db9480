/**
 * A fetch wrapper that reports each byte of a response (headers, then every body chunk) to the callback its
 * request carries: the idle watch of a model call measures inactivity, streaming or not.
 */

/** The RequestInit field that carries a request's progress callback to the wrapper (never sent). */
const PROGRESS = "hermesProgress";

/** Request options (`fetchOptions`) that make the wrapped fetch report this request's progress. */
export function withProgress(onProgress: () => void): RequestInit {
  return { [PROGRESS]: onProgress } as unknown as RequestInit;
}

export function progressFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const onProgress = (init as Record<string, unknown> | undefined)?.[PROGRESS] as (() => void) | undefined;
    const response = await inner(input, init);
    if (!onProgress) return response;
    onProgress();
    if (!response.body) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          onProgress();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
