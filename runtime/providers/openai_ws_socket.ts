/**
 * A small WebSocket client (RFC 6455: text messages, fragmentation, ping/pong, close) over a TCP connection
 * with TCP_NODELAY, for the Responses API's WebSocket mode (openai_ws.ts). Deno's built-in WebSocket writes
 * a frame's header and its payload separately without TCP_NODELAY: every message of a kilobyte or more then
 * waits for the peer's delayed acknowledgement, about 40 ms on Linux (measured on loopback: a 2 KB message
 * answered by 30 frames took 45 ms a round trip, against 2 ms here). Each frame goes out in one write.
 */

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const MAX_HEAD = 64 * 1024;

/** The handshake was refused, or the connection could not be made. */
export class WebSocketRefused extends Error {
  /** The HTTP status that refused the upgrade; null when none came. */
  readonly status: number | null;
  constructor(message: string, status: number | null = null) {
    super(message);
    this.name = "WebSocketRefused";
    this.status = status;
  }
}

export interface FrameSocketHandlers {
  /** A whole text (or binary, decoded as UTF-8) message. */
  onMessage: (text: string) => void;
  /** The connection ended: the peer's close code and reason, 1006 when it went without a close frame. */
  onClose: (code: number, reason: string) => void;
}

export class FrameSocket {
  readonly #conn: Deno.Conn;
  readonly #handlers: FrameSocketHandlers;
  #open = true;
  #reading: Promise<void>;
  /** Writes in order, each frame whole. */
  #writing: Promise<void> = Promise.resolve();

  private constructor(conn: Deno.Conn, rest: Uint8Array, handlers: FrameSocketHandlers) {
    this.#conn = conn;
    this.#handlers = handlers;
    this.#reading = this.#read(rest);
  }

  /** Opens `url` (ws: or wss:) with the given handshake headers; raises WebSocketRefused when it cannot. */
  static async connect(
    url: string,
    options: { headers: Headers; signal: AbortSignal } & FrameSocketHandlers,
  ): Promise<FrameSocket> {
    const target = new URL(url);
    const secure = target.protocol === "wss:";
    const port = Number(target.port || (secure ? 443 : 80));
    // URL keeps IPv6 hosts bracketed; connect wants them bare.
    const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1");
    let conn: Deno.Conn;
    try {
      const tcp = await Deno.connect({ hostname, port, signal: options.signal });
      tcp.setNoDelay(true);
      conn = secure ? await Deno.startTls(tcp, { hostname }) : tcp;
    } catch (error) {
      options.signal.throwIfAborted();
      throw new WebSocketRefused(`cannot connect to ${target.host}: ${(error as Error).message}`);
    }
    const abort = () => conn.close();
    options.signal.addEventListener("abort", abort, { once: true });
    try {
      const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
      const lines = [
        `GET ${target.pathname}${target.search} HTTP/1.1`,
        `Host: ${target.host}`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        `Sec-WebSocket-Key: ${key}`,
        "Sec-WebSocket-Version: 13",
      ];
      for (const [name, value] of options.headers) {
        if (!/^(host|upgrade|connection|sec-websocket-.*|content-length)$/i.test(name)) {
          lines.push(`${name}: ${value}`);
        }
      }
      await writeAll(conn, new TextEncoder().encode(`${lines.join("\r\n")}\r\n\r\n`));
      const { status, headers, rest } = await readHead(conn);
      if (status !== 101) {
        const body = await readBody(conn, rest, Number(headers.get("content-length") ?? 0));
        conn.close();
        const message = refusal(body);
        throw new WebSocketRefused(
          `the server refused the WebSocket upgrade${message ? `: ${message}` : ""}`,
          status,
        );
      }
      const expected = btoa(String.fromCharCode(
        ...new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(key + GUID))),
      ));
      if (headers.get("sec-websocket-accept") !== expected) {
        conn.close();
        throw new WebSocketRefused(
          "the server answered the WebSocket handshake wrongly (Sec-WebSocket-Accept)",
        );
      }
      return new FrameSocket(conn, rest, options);
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      if (error instanceof WebSocketRefused) throw error;
      try {
        conn.close();
      } catch { /* already closed */ }
      throw new WebSocketRefused(`the WebSocket handshake failed: ${(error as Error).message}`);
    } finally {
      options.signal.removeEventListener("abort", abort);
    }
  }

  get open(): boolean {
    return this.#open;
  }

  /** Sends one text message; raises when the connection is gone. */
  send(text: string): Promise<void> {
    return this.#write(1, new TextEncoder().encode(text));
  }

  /** Sends a close frame and ends the connection; resolves once it is released. */
  async close(code = 1000, reason = ""): Promise<void> {
    if (this.#open) {
      const why = new TextEncoder().encode(reason);
      const payload = new Uint8Array(2 + why.length);
      new DataView(payload.buffer).setUint16(0, code);
      payload.set(why, 2);
      await this.#write(8, payload).catch(() => {});
      this.#end(code, reason);
    }
    await this.#reading;
  }

  #write(opcode: number, payload: Uint8Array): Promise<void> {
    if (!this.#open) return Promise.reject(new Error("the WebSocket is closed"));
    const frame = encodeFrame(opcode, payload);
    const written = this.#writing.then(() => writeAll(this.#conn, frame));
    this.#writing = written.catch(() => {});
    return written;
  }

  #end(code: number, reason: string): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    this.#handlers.onClose(code, reason);
  }

  async #read(rest: Uint8Array): Promise<void> {
    let buffer = rest;
    const chunk = new Uint8Array(64 * 1024);
    let parts: Uint8Array[] = [];
    try {
      for (;;) {
        const frame = parseFrame(buffer);
        if (!frame) {
          const n = await this.#conn.read(chunk);
          if (n === null) break;
          buffer = concat(buffer, chunk.subarray(0, n));
          continue;
        }
        buffer = buffer.subarray(frame.length);
        if (frame.opcode === 8) {
          const view = new DataView(frame.payload.buffer, frame.payload.byteOffset, frame.payload.byteLength);
          const code = frame.payload.length >= 2 ? view.getUint16(0) : 1005;
          const reason = new TextDecoder().decode(frame.payload.subarray(2));
          // Answer the close, then let go.
          await this.#write(8, frame.payload.subarray(0, 2)).catch(() => {});
          this.#end(code, reason);
          return;
        }
        if (frame.opcode === 9) {
          await this.#write(10, frame.payload).catch(() => {});
          continue;
        }
        if (frame.opcode === 10) continue;
        parts.push(frame.payload);
        if (!frame.fin) continue;
        const whole = parts.length === 1 ? parts[0]! : parts.reduce(concat);
        parts = [];
        this.#handlers.onMessage(new TextDecoder().decode(whole));
      }
    } catch {
      // The connection broke or was closed under the read.
    }
    this.#end(1006, "");
  }
}

function encodeFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const length = payload.length;
  const extra = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const frame = new Uint8Array(2 + extra + 4 + length);
  frame[0] = 0x80 | opcode;
  const view = new DataView(frame.buffer);
  if (extra === 0) frame[1] = 0x80 | length;
  else if (extra === 2) {
    frame[1] = 0x80 | 126;
    view.setUint16(2, length);
  } else {
    frame[1] = 0x80 | 127;
    view.setBigUint64(2, BigInt(length));
  }
  // Clients mask every frame (RFC 6455, section 5.3).
  const at = 2 + extra;
  const mask = crypto.getRandomValues(new Uint8Array(4));
  frame.set(mask, at);
  for (let i = 0; i < length; i++) frame[at + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

/** The first whole frame of `buffer`, or null when more bytes are needed. */
function parseFrame(
  buffer: Uint8Array,
): { fin: boolean; opcode: number; payload: Uint8Array; length: number } | null {
  if (buffer.length < 2) return null;
  const fin = (buffer[0]! & 0x80) !== 0;
  const opcode = buffer[0]! & 0x0f;
  const masked = (buffer[1]! & 0x80) !== 0;
  let length = buffer[1]! & 0x7f;
  let at = 2;
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  if (length === 126) {
    if (buffer.length < 4) return null;
    length = view.getUint16(2);
    at = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return null;
    length = Number(view.getBigUint64(2));
    at = 10;
  }
  const mask = masked ? buffer.subarray(at, at + 4) : null;
  if (masked) at += 4;
  if (buffer.length < at + length) return null;
  let payload = buffer.subarray(at, at + length);
  if (mask) payload = payload.map((byte, i) => byte ^ mask[i & 3]!);
  return { fin, opcode, payload, length: at + length };
}

async function readHead(conn: Deno.Conn): Promise<{ status: number; headers: Headers; rest: Uint8Array }> {
  let buffer: Uint8Array = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  for (;;) {
    const end = indexOfBlankLine(buffer);
    if (end >= 0) {
      const [statusLine, ...lines] = new TextDecoder().decode(buffer.subarray(0, end)).split("\r\n");
      const status = Number(statusLine?.split(" ")[1]);
      const headers = new Headers();
      for (const line of lines) {
        const colon = line.indexOf(":");
        if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      }
      return { status, headers, rest: buffer.slice(end + 4) };
    }
    if (buffer.length > MAX_HEAD) throw new Error("the handshake answer's head is too long");
    const n = await conn.read(chunk);
    if (n === null) throw new Error("the server closed the connection during the handshake");
    buffer = concat(buffer, chunk.subarray(0, n));
  }
}

async function readBody(conn: Deno.Conn, rest: Uint8Array, length: number): Promise<string> {
  let buffer = rest;
  const want = Math.min(length, MAX_HEAD);
  const chunk = new Uint8Array(4096);
  while (buffer.length < want) {
    const n = await conn.read(chunk).catch(() => null);
    if (n === null) break;
    buffer = concat(buffer, chunk.subarray(0, n));
  }
  return new TextDecoder().decode(buffer.subarray(0, want));
}

/** The error message of a refusal's JSON body (`{"error": {"message": …}}`), or "". */
function refusal(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return message;
  } catch { /* not JSON */ }
  return "";
}

function indexOfBlankLine(buffer: Uint8Array): number {
  for (let i = 0; i + 3 < buffer.length; i++) {
    if (buffer[i] === 13 && buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}
