/**
 * The connection guard in front of Deno.serve, which has no header or idle timeout Hermes can set: it takes
 * the clients' connections (TCP, or TLS it terminates) and relays each over its own Unix-socket connection
 * to the server, reading the request framing as it goes (heads, Content-Length and chunked bodies) so it
 * knows where each connection is:
 *
 * - a request head must be complete within the header timeout from its first byte (the first request's from
 *   the moment the connection was accepted): a client that sends nothing, or its headers byte by byte, is
 *   dropped;
 * - between requests — the previous response sent, the next head not begun — a connection may stay idle for
 *   the idle timeout, then it is closed;
 * - while a response is on its way (a long prompt, an event stream) neither applies.
 *
 * Where responses end is told by the server's handler (`ended`), which learns the connection from a header
 * the guard adds to each request head it relays (one a client sends itself is dropped). A body is bounded by
 * the API's own body timeout. An `Upgrade` request turns the connection into a plain relay.
 */

export const CONNECTION_HEADER = "x-hermes-connection";
const MAX_HEAD = 64 * 1024;
const CRLF2 = new Uint8Array([13, 10, 13, 10]);

export interface GuardOptions {
  headerTimeoutMs: number;
  idleTimeoutMs: number;
  /** Opens a connection to the server behind the guard. */
  upstream: () => Promise<Deno.Conn>;
}

type Phase =
  | { kind: "head" }
  | { kind: "length"; left: number }
  | { kind: "chunked"; step: "size" | "data" | "data-end" | "trailer"; left: number; line: string }
  | { kind: "tunnel" };

export class ConnectionGuard {
  readonly #o: GuardOptions;
  readonly #open = new Map<string, GuardedConnection>();

  constructor(options: GuardOptions) {
    this.#o = options;
  }

  /** Told by the handler: a response on connection `id` ended (sent, or cancelled). */
  ended(id: string): void {
    this.#open.get(id)?.responseEnded();
  }

  /** Relays `client` until either side closes or a timeout drops it. */
  async handle(client: Deno.Conn): Promise<void> {
    const id = crypto.randomUUID();
    let upstream: Deno.Conn;
    try {
      upstream = await this.#o.upstream();
    } catch {
      closeQuietly(client);
      return;
    }
    const connection = new GuardedConnection(id, client, upstream, this.#o);
    this.#open.set(id, connection);
    try {
      await connection.run();
    } finally {
      this.#open.delete(id);
    }
  }

  /** Connections relayed now. */
  get size(): number {
    return this.#open.size;
  }
}

class GuardedConnection {
  #phase: Phase = { kind: "head" };
  #head: Uint8Array[] = [];
  #headBytes = 0;
  /** Heads relayed whose response has not ended. */
  #pending = 0;
  /** When the head being read began (the accept for the first one); null between requests. */
  #headStarted: number | null = Date.now();
  #idleSince = Date.now();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;

  constructor(
    readonly id: string,
    readonly client: Deno.Conn,
    readonly upstream: Deno.Conn,
    readonly options: GuardOptions,
  ) {
    this.#writer = upstream.writable.getWriter();
  }

  async run(): Promise<void> {
    this.#arm();
    // The server closing its side (a shutdown, a response with Connection: close) ends the client's too.
    const outbound = this.upstream.readable.pipeTo(this.client.writable).catch(() => {}).finally(() =>
      this.close()
    );
    try {
      for await (const chunk of this.client.readable) {
        if (this.#closed) break;
        await this.#inbound(chunk);
      }
    } catch {
      // the client went away or sent what is not HTTP: the connection ends
    } finally {
      this.close();
      await outbound;
    }
  }

  responseEnded(): void {
    if (this.#pending > 0) this.#pending--;
    if (this.#pending === 0) this.#idleSince = Date.now();
    this.#arm();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    closeQuietly(this.client);
    closeQuietly(this.upstream);
  }

  /** Sets the one timer the connection's state calls for now. */
  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#closed || this.#phase.kind !== "head") return;
    let deadline: number;
    if (this.#headStarted !== null) deadline = this.#headStarted + this.options.headerTimeoutMs;
    else if (this.#pending === 0) deadline = this.#idleSince + this.options.idleTimeoutMs;
    else return;
    this.#timer = setTimeout(() => this.close(), Math.max(0, deadline - Date.now()));
  }

  async #inbound(chunk: Uint8Array): Promise<void> {
    let rest = chunk;
    while (rest.length > 0 && !this.#closed) {
      const phase = this.#phase;
      if (phase.kind === "tunnel") {
        await this.#writer.write(rest);
        return;
      }
      if (phase.kind === "head") {
        if (this.#headStarted === null) {
          this.#headStarted = Date.now();
          this.#arm();
        }
        rest = await this.#readHead(rest);
        continue;
      }
      if (phase.kind === "length") {
        const take = Math.min(phase.left, rest.length);
        await this.#writer.write(rest.subarray(0, take));
        rest = rest.subarray(take);
        phase.left -= take;
        if (phase.left === 0) this.#nextRequest();
        continue;
      }
      rest = await this.#chunked(phase, rest);
    }
  }

  /** Buffers a head until its blank line, then relays it with the connection header; the rest is returned. */
  async #readHead(bytes: Uint8Array): Promise<Uint8Array> {
    this.#head.push(bytes);
    this.#headBytes += bytes.length;
    const buffered = concat(this.#head);
    const end = indexOf(buffered, CRLF2);
    // The guard finds heads by CRLF CRLF, the server behind it also by a bare LF: a head with a bare LF would be
    // framed differently on the two sides (its header lines, the connection header among them, unseen here).
    if (hasBareLf(buffered, end === -1 ? buffered.length : end)) {
      this.#refuse(400, "The request head has a line ending in a bare LF: lines end in CRLF");
      return new Uint8Array(0);
    }
    if ((end === -1 ? this.#headBytes : end) > MAX_HEAD) {
      this.#refuse(431, `The request head is over ${MAX_HEAD} bytes`);
      return new Uint8Array(0);
    }
    if (end === -1) {
      this.#head = [buffered];
      return new Uint8Array(0);
    }
    this.#head = [];
    this.#headBytes = 0;
    const head = new TextDecoder().decode(buffered.subarray(0, end));
    const rest = buffered.subarray(end + 4);
    const lines = head.split("\r\n");
    // Blank lines before a request line are allowed (RFC 9112, section 2.2).
    while (lines.length > 0 && lines[0] === "") lines.shift();
    if (lines.length === 0) return rest;
    const fields = lines.slice(1).filter((line) => !line.toLowerCase().startsWith(`${CONNECTION_HEADER}:`));
    const value = (name: string) =>
      fields.filter((line) => line.toLowerCase().startsWith(`${name}:`)).map((line) =>
        line.slice(name.length + 1).trim().toLowerCase()
      );
    const relayed = [lines[0]!, ...fields, `${CONNECTION_HEADER}: ${this.id}`, "", ""].join("\r\n");
    await this.#writer.write(new TextEncoder().encode(relayed));
    this.#pending++;
    this.#headStarted = null;
    const length = Number(value("content-length")[0] ?? "0");
    if (value("upgrade").length > 0) this.#phase = { kind: "tunnel" };
    else if (value("transfer-encoding").some((v) => v.split(",").map((s) => s.trim()).includes("chunked"))) {
      this.#phase = { kind: "chunked", step: "size", left: 0, line: "" };
    } else if (Number.isSafeInteger(length) && length > 0) this.#phase = { kind: "length", left: length };
    else this.#nextRequest();
    this.#arm();
    return rest;
  }

  /** Relays chunked body bytes, following the chunk sizes to the end of the body. */
  async #chunked(phase: Extract<Phase, { kind: "chunked" }>, bytes: Uint8Array): Promise<Uint8Array> {
    let i = 0;
    while (i < bytes.length && this.#phase === phase) {
      if (phase.step === "data") {
        const take = Math.min(phase.left, bytes.length - i);
        i += take;
        phase.left -= take;
        if (phase.left === 0) (phase.step = "data-end", phase.left = 2);
        continue;
      }
      if (phase.step === "data-end") {
        const take = Math.min(phase.left, bytes.length - i);
        i += take;
        phase.left -= take;
        if (phase.left === 0) phase.step = "size";
        continue;
      }
      // A size line or a trailer line, up to its LF.
      const byte = bytes[i++]!;
      if (byte !== 10) {
        phase.line += String.fromCharCode(byte);
        if (phase.line.length > 4096) this.close();
        continue;
      }
      const line = phase.line.replace(/\r$/, "");
      phase.line = "";
      if (phase.step === "size") {
        const size = parseInt(line.split(";")[0]!.trim(), 16);
        if (!Number.isSafeInteger(size) || size < 0) {
          this.close();
          break;
        }
        if (size === 0) phase.step = "trailer";
        else (phase.step = "data", phase.left = size);
      } else if (line === "") {
        this.#nextRequest();
      }
    }
    await this.#writer.write(bytes.subarray(0, i));
    return bytes.subarray(i);
  }

  /**
   * Answers a head the guard will not relay with a problem+json and closes the connection. Only when no
   * response is on its way (else the answer would interleave with it): then the connection just closes.
   */
  #refuse(status: 400 | 431, detail: string): void {
    if (this.#pending === 0) {
      const body = JSON.stringify({
        type: "about:blank",
        title: status === 400 ? "Bad Request" : "Request Header Fields Too Large",
        status,
        detail,
      });
      const reason = status === 400 ? "Bad Request" : "Request Header Fields Too Large";
      const response = `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/problem+json\r\n` +
        `content-length: ${new TextEncoder().encode(body).length}\r\nconnection: close\r\n\r\n${body}`;
      const bytes = new TextEncoder().encode(response);
      // Written straight to the socket (its stream is the server's relay's); closed once it is out.
      this.#phase = { kind: "tunnel" };
      this.#closed = true;
      clearTimeout(this.#timer);
      // The upstream closes after the write: its relay's end would close the client's writing side.
      void writeAll(this.client, bytes).finally(
        () => (closeQuietly(this.upstream), closeQuietly(this.client)),
      );
      return;
    }
    this.close();
  }

  #nextRequest(): void {
    this.#phase = { kind: "head" };
    this.#idleSince = Date.now();
    this.#arm();
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // closed already
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  try {
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  } catch {
    // the client went away
  }
}

/** Whether `bytes` before `end` hold an LF not preceded by CR. */
function hasBareLf(bytes: Uint8Array, end: number): boolean {
  for (let i = bytes.indexOf(10); i !== -1 && i < end; i = bytes.indexOf(10, i + 1)) {
    if (i === 0 || bytes[i - 1] !== 13) return true;
  }
  return false;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) (all.set(part, at), at += part.length);
  return all;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
