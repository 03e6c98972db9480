/**
 * An HTTPS forward proxy (HTTP CONNECT tunnels) that counts the bytes coming back from each upstream host:
 * what a child process given `HTTPS_PROXY` downloads, measured on the wire (TLS included), not guessed from
 * the cache it leaves behind.
 */
export interface CountingProxy {
  /** `http://127.0.0.1:PORT`, for HTTPS_PROXY / HTTP_PROXY. */
  readonly url: string;
  /** Bytes received from upstream hosts so far, by host. */
  readonly received: Map<string, number>;
  close(): Promise<void>;
}

export function startCountingProxy(): CountingProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received = new Map<string, number>();
  const tunnels = new Set<Promise<void>>();
  let closed: Promise<void> | undefined;
  const accepting = (async () => {
    for await (const client of listener) {
      const tunnel = serve(client, received).catch(() => {}).finally(() => tunnels.delete(tunnel));
      tunnels.add(tunnel);
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    received,
    close() {
      closed ??= (async () => {
        listener.close();
        await accepting;
        await Promise.allSettled([...tunnels]);
      })();
      return closed;
    },
  };
}

async function serve(client: Deno.Conn, received: Map<string, number>): Promise<void> {
  const head = await readHead(client);
  const target = /^CONNECT ([^\s:]+):(\d+) HTTP/.exec(head.text);
  if (!target) {
    await client.write(new TextEncoder().encode("HTTP/1.1 405 Only CONNECT\r\nContent-Length: 0\r\n\r\n"));
    client.close();
    return;
  }
  const [, host, port] = target as unknown as [string, string, string];
  const upstream = await Deno.connect({ hostname: host, port: Number(port) });
  await client.write(new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
  if (head.rest.length > 0) await upstream.write(head.rest);
  const count = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      received.set(host, (received.get(host) ?? 0) + chunk.byteLength);
      controller.enqueue(chunk);
    },
  });
  await Promise.allSettled([
    client.readable.pipeTo(upstream.writable),
    upstream.readable.pipeThrough(count).pipeTo(client.writable),
  ]);
}

/** Reads up to the end of the request head; returns it and whatever arrived after it. */
async function readHead(conn: Deno.Conn): Promise<{ text: string; rest: Uint8Array }> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  while (true) {
    const n = await conn.read(chunk);
    if (n === null) return { text: new TextDecoder().decode(buffer), rest: new Uint8Array(0) };
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
    const text = new TextDecoder().decode(buffer);
    const end = text.indexOf("\r\n\r\n");
    if (end !== -1) {
      const headBytes = new TextEncoder().encode(text.slice(0, end + 4)).length;
      return { text: text.slice(0, end), rest: buffer.subarray(headBytes) };
    }
  }
}
