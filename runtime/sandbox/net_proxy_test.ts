/** The proxy on its own (no sandbox): what it answers to forms it does not serve, and upstream failures. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startNetProxy } from "./net_proxy.ts";
import { parseHostList } from "./net_hosts.ts";

async function ask(path: string, head: string): Promise<string> {
  const conn = await Deno.connect({ transport: "unix", path });
  await conn.write(new TextEncoder().encode(head));
  return new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
}

Deno.test("net proxy: plain requests are rewritten to origin form; other forms get 400, closed ports 502", async () => {
  const dir = await Deno.makeTempDir();
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    seen.push(
      `${new URL(request.url).pathname}${new URL(request.url).search} ${request.headers.get("connection")}`,
    );
    return new Response("ok");
  });
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedPort = closed.addr.port;
  closed.close();
  const proxy = startNetProxy(join(dir, "p.sock"), parseHostList([`127.0.0.1`]));
  try {
    const port = server.addr.port;
    const plain = await ask(
      proxy.path,
      `GET http://127.0.0.1:${port}/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nProxy-Connection: keep-alive\r\n\r\n`,
    );
    assert.match(plain, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
    assert.deepEqual(seen, ["/a?b=1 close"]);
    assert.match(await ask(proxy.path, `GET /a HTTP/1.1\r\nHost: x\r\n\r\n`), /^HTTP\/1\.1 400 /);
    assert.match(await ask(proxy.path, `GET https://127.0.0.1/ HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 400 /);
    assert.match(
      await ask(proxy.path, `CONNECT 127.0.0.1:${closedPort} HTTP/1.1\r\n\r\n`),
      /^HTTP\/1\.1 502 /,
    );
    assert.match(
      await ask(proxy.path, `CONNECT 10.0.0.1:${closedPort} HTTP/1.1\r\n\r\n`),
      /^HTTP\/1\.1 403 /,
    );
  } finally {
    proxy.close();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
