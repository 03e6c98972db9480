/**
 * `hermes serve`'s transport: the API (server.ts) on Deno.serve behind the connection guard (guard.ts: header
 * and idle timeouts, TLS), stopped gracefully when `signal` aborts: event streams (which end on the same
 * signal) get up to `drain` to send their last event, then the server accepts no new connection and lets the
 * requests in flight finish.
 */
import type { Logger } from "../core/log.ts";
import type { Hono } from "hono";
import type { ApiEnv } from "./auth.ts";
import { CONNECTION_HEADER, ConnectionGuard } from "./guard.ts";

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
    /** How long a request head may take from its first byte (the first one's from the accept). */
    headerTimeoutMs?: number;
    /** How long a connection may stay idle between requests. */
    idleTimeoutMs?: number;
  },
): Promise<void> {
  // Deno.serve listens on a Unix socket in a private folder; the guard (guard.ts) owns the public address.
  const dir = await Deno.makeTempDir({ prefix: "hermes-serve-" });
  const path = `${dir}/api.sock`;
  const guard = new ConnectionGuard({
    headerTimeoutMs: options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT,
    upstream: () => Deno.connect({ transport: "unix", path }),
  });
  const server = Deno.serve({
    path,
    onListen: () => {},
    onError: (error) => {
      options.log.error(`hermes serve: ${error instanceof Error ? error.stack ?? error.message : error}`);
      return new Response(null, { status: 500 });
    },
  }, (request) => tracked(api, guard, options.tls ? asHttps(request) : request));
  let listener: Deno.Listener;
  try {
    const { hostname, port } = options.listen;
    listener = options.tls
      ? Deno.listenTls({ hostname, port, cert: options.tls.cert, key: options.tls.key })
      : Deno.listen({ hostname, port });
  } catch (error) {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  const address = listener.addr as Deno.NetAddr;
  options.onListen?.({ hostname: address.hostname, port: address.port });
  const relays = new Set<Promise<void>>();
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        const relay = guard.handle(conn).finally(() => relays.delete(relay));
        relays.add(relay);
      }
    } catch {
      // the listener was closed: the server is stopping
    }
  })();
  const stop = async () => {
    await options.drain?.();
    try {
      listener.close();
    } catch {
      // closed already
    }
    await server.shutdown();
  };
  if (options.signal.aborted) void stop();
  else options.signal.addEventListener("abort", () => void stop(), { once: true });
  try {
    await server.finished;
    await accepting;
    await Promise.all(relays);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

export const DEFAULT_HEADER_TIMEOUT = 10_000;
export const DEFAULT_IDLE_TIMEOUT = 60_000;

/**
 * The request as the client made it: over TLS the guard terminates, so its URL is https (Deno.serve behind
 * the guard sees plain HTTP on a Unix socket). What reads the scheme (the console's Secure, __Host- cookie)
 * then sees the truth.
 */
function asHttps(request: Request): Request {
  // Deno.serve on a Unix socket names the scheme http+unix, which URL will not turn into https in place.
  const url = request.url.replace(/^[a-z+]+:/i, "https:");
  return url === request.url ? request : new Request(url, request);
}

/** Answers `request`, telling the guard when its response has ended (sent in full, or cancelled). */
async function tracked(api: Hono<ApiEnv>, guard: ConnectionGuard, request: Request): Promise<Response> {
  const id = request.headers.get(CONNECTION_HEADER);
  if (id === null) return await api.fetch(request);
  let response: Response;
  try {
    response = await api.fetch(request);
  } catch (error) {
    guard.ended(id);
    throw error;
  }
  if (!response.body) {
    guard.ended(id);
    return response;
  }
  const reader = response.body.getReader();
  let done = false;
  const finish = () => {
    if (!done) (done = true, guard.ended(id));
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) {
          finish();
          controller.close();
        } else controller.enqueue(next.value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
