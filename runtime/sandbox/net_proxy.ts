/**
 * The filtering HTTP proxy behind a sandbox's host list. It listens on a unix socket file in Hermes's
 * private directory (the sandbox reaches it only through the bridge, net_bridge.ts) and serves two forms:
 * `CONNECT host:port` (TLS and any other stream) and plain HTTP with an absolute URI. Each target must match
 * the list (net_hosts.ts); the proxy resolves the name itself and connects to the address it checked, so a
 * second lookup cannot swap in another one. An internal address (ip_address.ts: loopback, private,
 * link-local, NAT64, this host's own addresses, …) is
 * reached only when the rule names that address. Everything else gets 403 with the reason, and `onRefusal`.
 */
import { isInternalAddress, isIP, ownAddresses } from "./ip_address.ts";
import { type HostRule, matchHost, namesAddress } from "./net_hosts.ts";

export interface Refusal {
  host: string;
  port: number;
  reason: string;
}

export interface NetProxy {
  /** The unix socket file the bridge forwards to. */
  path: string;
  /** Stops listening and ends every open connection. */
  close(): void;
}

const MAX_HEAD = 16 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function startNetProxy(
  path: string,
  rules: readonly HostRule[],
  onRefusal: (refusal: Refusal) => void = () => {},
): NetProxy {
  const listener = Deno.listen({ transport: "unix", path });
  const close = serveProxy(listener, { match: (host, port) => matchHost(rules, host, port), onRefusal });
  return { path, close };
}

export interface ProxyOptions {
  /** The rule that lets `host:port` through, or null (namesAddress of it opens an internal address). */
  match: (host: string, port: number) => HostRule | null;
  onRefusal?: (refusal: Refusal) => void;
  /** The Proxy-Authorization every request must carry, when others may reach the listener (TCP). */
  authorization?: string;
}

/** A proxy on loopback TCP for Hermes's own client (http_fetch): only requests with `authorization` pass. */
export interface LoopbackProxy {
  port: number;
  close(): void;
}

export function startLoopbackProxy(options: ProxyOptions & { authorization: string }): LoopbackProxy {
  const listener = Deno.listen({ transport: "tcp", hostname: "127.0.0.1", port: 0 });
  const close = serveProxy(listener, options);
  return { port: listener.addr.port, close };
}

/** Serves until the returned function stops listening and ends every open connection. */
function serveProxy(listener: Deno.Listener, options: ProxyOptions): () => void {
  const open = new Set<Deno.Conn>();
  const track = (conn: Deno.Conn) => {
    open.add(conn);
    return () => {
      open.delete(conn);
      try {
        conn.close();
      } catch {
        // already closed
      }
    };
  };
  (async () => {
    for await (const client of listener) {
      const done = track(client);
      serve(client, options, track).catch(() => {}).finally(done);
    }
  })().catch(() => {});
  return () => {
    try {
      listener.close();
    } catch {
      // already closed
    }
    for (const conn of open) {
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
    open.clear();
  };
}

async function serve(
  client: Deno.Conn,
  options: ProxyOptions,
  track: (conn: Deno.Conn) => () => void,
): Promise<void> {
  const onRefusal = options.onRefusal ?? (() => {});
  const head = await readHead(client);
  if (head === null) return;
  const lines = decoder.decode(head.bytes).split("\r\n");
  const [method, target, version] = lines[0]!.split(" ");
  const request = parseTarget(method ?? "", target ?? "");
  if (request === null || !version?.startsWith("HTTP/")) {
    await answer(client, 400, "the proxy takes CONNECT host:port or an absolute http:// URI");
    return;
  }
  if (options.authorization !== undefined && !authorized(lines, options.authorization)) {
    await answer(client, 407, "the proxy needs its Proxy-Authorization");
    return;
  }
  const refuse = async (reason: string) => {
    onRefusal({ host: request.host, port: request.port, reason });
    await answer(client, 403, `${request.host}:${request.port} ${reason}`);
  };
  const rule = options.match(request.host, request.port);
  if (rule === null) return await refuse("is not in the sandbox's host list");
  let addresses: string[];
  try {
    const bare = request.host.replace(/^\[(.*)\]$/, "$1");
    if (isIP(bare)) addresses = [bare];
    else {
      // getaddrinfo (node:dns), so /etc/hosts counts as for any program; loaded only when a name is asked.
      const { lookup } = await import("node:dns/promises");
      addresses = (await lookup(bare, { all: true })).map((found) => found.address);
    }
  } catch {
    return await refuse("does not resolve");
  }
  // Asked per request: an interface may gain an address while a sandbox runs.
  const own = ownAddresses();
  const reachable = addresses.filter((address) =>
    !isInternalAddress(address, { own }) || namesAddress(rule, address)
  );
  if (reachable.length === 0) {
    return await refuse(
      `resolves to an internal address (${addresses.join(", ")}); only a rule naming that address reaches it`,
    );
  }
  let upstream: Deno.Conn | null = null;
  for (const address of reachable) {
    try {
      upstream = await Deno.connect({ hostname: address, port: request.port });
      break;
    } catch {
      // the next address
    }
  }
  if (upstream === null) {
    await answer(client, 502, `${request.host}:${request.port} cannot be reached`);
    return;
  }
  const done = track(upstream);
  try {
    if (request.connect) {
      await writeAll(client, encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
    } else {
      // Origin form, one request per connection: a second request on it could name another host.
      const headers = lines.slice(1).filter((line) =>
        line !== "" && !/^(proxy-connection|proxy-authorization|connection|keep-alive):/i.test(line)
      );
      const rewritten = [`${method} ${request.path} ${version}`, ...headers, "Connection: close", "", ""];
      await writeAll(upstream, encoder.encode(rewritten.join("\r\n")));
    }
    if (head.rest.length) await writeAll(upstream, head.rest);
    await Promise.all([
      client.readable.pipeTo(upstream.writable, { preventClose: false }).catch(() => {}),
      upstream.readable.pipeTo(client.writable).catch(() => {}),
    ]);
  } finally {
    done();
  }
}

interface Target {
  connect: boolean;
  host: string;
  port: number;
  /** Origin-form path of a plain request. */
  path: string;
}

function parseTarget(method: string, target: string): Target | null {
  if (method === "CONNECT") {
    const match = /^(\[[^\]]+\]|[^:\[\]]+):(\d{1,5})$/.exec(target);
    if (!match) return null;
    return { connect: true, host: match[1]!, port: Number(match[2]), path: "" };
  }
  if (!/^[A-Z]+$/.test(method) || !target.startsWith("http://")) return null;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return null;
  }
  return {
    connect: false,
    host: url.hostname,
    port: url.port === "" ? 80 : Number(url.port),
    path: `${url.pathname}${url.search}`,
  };
}

/** Compares in constant time (the header's value is a secret of this process). */
function authorized(lines: readonly string[], expected: string): boolean {
  const line = lines.find((line) => /^proxy-authorization:/i.test(line));
  const got = encoder.encode(line === undefined ? "" : line.slice(line.indexOf(":") + 1).trim());
  const want = encoder.encode(expected);
  let difference = got.length ^ want.length;
  for (let i = 0; i < want.length; i++) difference |= want[i]! ^ (got[i] ?? 0);
  return difference === 0;
}

async function readHead(conn: Deno.Conn): Promise<{ bytes: Uint8Array; rest: Uint8Array } | null> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  while (buffer.length < MAX_HEAD) {
    const n = await conn.read(chunk);
    if (n === null) return null;
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
    const end = indexOfBlankLine(buffer);
    if (end >= 0) return { bytes: buffer.subarray(0, end), rest: buffer.subarray(end + 4) };
  }
  await answer(conn, 431, "the request head is larger than 16 KiB");
  return null;
}

function indexOfBlankLine(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

const STATUS: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  407: "Proxy Authentication Required",
  431: "Request Header Fields Too Large",
  502: "Bad Gateway",
};

async function answer(conn: Deno.Conn, status: number, reason: string): Promise<void> {
  const body = `hermes sandbox proxy: ${reason}\n`;
  const head = `HTTP/1.1 ${status} ${STATUS[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
    `Content-Length: ${encoder.encode(body).length}\r\nConnection: close\r\n\r\n`;
  await writeAll(conn, encoder.encode(head + body)).catch(() => {});
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}
