/**
 * The OpenAI-compatible test server (tests/_testing/openai_server.ts) behind a front that timestamps every
 * exchange: when a request arrived and when its reply was ready. Benches read model-call timing from here,
 * outside the process under test, so the figures cover everything the client does between two requests.
 */
import {
  type OpenAIServer,
  type OpenAIServerOptions,
  startOpenAIServer,
} from "../tests/_testing/openai_server.ts";

export interface Exchange {
  /** performance.now() of this process when the request reached the front. */
  arrived: number;
  /** performance.now() when the reply was ready to go back. */
  responded: number;
}

export interface TimedServer {
  /** Base URL ending in /v1 (the front). */
  readonly url: string;
  readonly upstream: OpenAIServer;
  /** One per chat completion request, in arrival order; clear it between runs with `exchanges.length = 0`. */
  readonly exchanges: Exchange[];
  close(): Promise<void>;
}

export async function startTimedServer(options: OpenAIServerOptions = {}): Promise<TimedServer> {
  const upstream = await startOpenAIServer(options);
  const origin = upstream.url.replace(/\/v1$/, "");
  const exchanges: Exchange[] = [];
  const { promise: listening, resolve: onListen } = Promise.withResolvers<Deno.NetAddr>();
  const front = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen }, async (request) => {
    const arrived = performance.now();
    const path = new URL(request.url).pathname;
    const reply = await fetch(`${origin}${path}`, {
      method: request.method,
      headers: request.headers,
      body: request.method === "POST" ? await request.arrayBuffer() : null,
    });
    const body = await reply.arrayBuffer();
    if (path.endsWith("/chat/completions")) exchanges.push({ arrived, responded: performance.now() });
    return new Response(body, { status: reply.status, headers: reply.headers });
  });
  const address = await listening;
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    upstream,
    exchanges,
    async close() {
      await front.shutdown();
      await upstream.close();
    },
  };
}
