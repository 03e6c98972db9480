/**
 * `hermes serve`'s transport: the API (server.ts) on Deno.serve, stopped gracefully when `signal` aborts:
 * event streams (which end on the same signal) get up to `drain` to send their last event, then the server
 * accepts no new connection and lets the requests in flight finish.
 */
import type { Logger } from "../core/log.ts";
import type { Hono } from "hono";
import type { ApiEnv } from "./auth.ts";

export interface Listen {
  hostname: string;
  port: number;
}

/** `HOST:PORT` (`[::1]:8787` for IPv6); the port may be 0 (any free one). */
export function parseListen(text: string): Listen | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  return { hostname: match[1] ?? match[2]!, port };
}

/** Serves `api` until `signal` aborts; resolves once the server has stopped. */
export async function serveApi(
  api: Hono<ApiEnv>,
  options: {
    listen: Listen;
    signal: AbortSignal;
    log: Logger;
    onListen?: (address: Listen) => void;
    /** Resolves when the server may close (its event streams ended). */
    drain?: () => Promise<void>;
    /** PEM certificate chain and private key: serve HTTPS instead of HTTP. */
    tls?: { cert: string; key: string };
  },
): Promise<void> {
  const server = Deno.serve({
    hostname: options.listen.hostname,
    port: options.listen.port,
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
    onListen: ({ hostname, port }) => options.onListen?.({ hostname, port }),
    onError: (error) => {
      options.log.error(`hermes serve: ${error instanceof Error ? error.stack ?? error.message : error}`);
      return new Response(null, { status: 500 });
    },
  }, api.fetch);
  const stop = async () => {
    await options.drain?.();
    await server.shutdown();
  };
  if (options.signal.aborted) void stop();
  else options.signal.addEventListener("abort", () => void stop(), { once: true });
  await server.finished;
}
