import assert from "node:assert/strict";
import { FrameSocket, WebSocketRefused } from "./openai_ws_socket.ts";

function collector() {
  const messages: string[] = [];
  const closed = Promise.withResolvers<{ code: number; reason: string }>();
  let wake = () => {};
  return {
    messages,
    closed: closed.promise,
    next: () => new Promise<void>((resolve) => (wake = resolve)),
    onMessage: (text: string) => {
      messages.push(text);
      wake();
    },
    onClose: (code: number, reason: string) => closed.resolve({ code, reason }),
  };
}

Deno.test("FrameSocket: echoes messages of every length class (7-bit, 16-bit, 64-bit) and sends the handshake headers", async () => {
  let auth = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    auth = request.headers.get("authorization") ?? "";
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.onmessage = (event) => socket.send(`echo:${event.data}`);
    return response;
  });
  const seen = collector();
  const socket = await FrameSocket.connect(`ws://127.0.0.1:${server.addr.port}/v1/responses?x=1`, {
    headers: new Headers({ Authorization: "Bearer k" }),
    signal: new AbortController().signal,
    ...seen,
  });
  assert.equal(auth, "Bearer k");
  for (const size of [5, 300, 70_000]) {
    const text = "é".repeat(size);
    const answered = seen.next();
    await socket.send(text);
    await answered;
    assert.equal(seen.messages.at(-1), `echo:${text}`);
  }
  await socket.close();
  assert.equal(socket.open, false);
  await server.shutdown();
});

Deno.test("FrameSocket: a refused upgrade names its status and the error message of its body", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => Response.json({ error: { message: "Incorrect API key provided" } }, { status: 401 }),
  );
  const refused = await FrameSocket.connect(`ws://127.0.0.1:${server.addr.port}/`, {
    headers: new Headers(),
    signal: new AbortController().signal,
    ...collector(),
  }).catch((error) => error);
  assert.ok(refused instanceof WebSocketRefused);
  assert.equal(refused.status, 401);
  assert.match(refused.message, /refused the WebSocket upgrade: Incorrect API key provided/);
  await server.shutdown();
});

/** A raw server: answers the handshake, then writes `frames` as given and reads what comes back. */
function rawServer(frames: Uint8Array[]) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received = (async () => {
    const conn = await listener.accept();
    const buffer = new Uint8Array(8192);
    const n = (await conn.read(buffer))!;
    const key = new TextDecoder().decode(buffer.subarray(0, n)).match(/Sec-WebSocket-Key: (.*)\r\n/i)![1]!;
    const digest = await crypto.subtle.digest(
      "SHA-1",
      new TextEncoder().encode(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`),
    );
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    await conn.write(
      new TextEncoder().encode(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
      ),
    );
    for (const frame of frames) await conn.write(frame);
    const back: number[] = [];
    for (;;) {
      const read = await conn.read(buffer).catch(() => null);
      if (read === null) break;
      back.push(...buffer.subarray(0, read));
    }
    conn.close();
    return back;
  })();
  return { port: (listener.addr as Deno.NetAddr).port, received, close: () => listener.close() };
}

const frame = (first: number, text: string | Uint8Array) => {
  const payload = typeof text === "string" ? new TextEncoder().encode(text) : text;
  return new Uint8Array([first, payload.length, ...payload]);
};

Deno.test("FrameSocket: joins a fragmented message, answers a ping in between with a pong, and reports the server's close", async () => {
  const server = rawServer([
    frame(0x01, "hel"), // text, not final
    frame(0x89, "are you there"), // ping
    frame(0x80, "lo"), // continuation, final
    frame(0x88, new Uint8Array([0x03, 0xf3, ...new TextEncoder().encode("going away")])), // close 1011
  ]);
  const seen = collector();
  await FrameSocket.connect(`ws://127.0.0.1:${server.port}/`, {
    headers: new Headers(),
    signal: new AbortController().signal,
    ...seen,
  });
  assert.deepEqual(await seen.closed, { code: 1011, reason: "going away" });
  assert.deepEqual(seen.messages, ["hello"]);
  // The client's frames are masked: a pong carrying the ping's payload, then the close.
  const back = new Uint8Array(await server.received);
  assert.equal(back[0], 0x8a);
  assert.equal(back[1]! & 0x80, 0x80);
  const length = back[1]! & 0x7f;
  const mask = back.subarray(2, 6);
  const pong = back.subarray(6, 6 + length).map((byte, i) => byte ^ mask[i & 3]!);
  assert.equal(new TextDecoder().decode(pong), "are you there");
  assert.equal(back[6 + length], 0x88);
  server.close();
});
