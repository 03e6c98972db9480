/**
 * The Responses API's WebSocket mode (`model.transport: websocket`): one connection to `/v1/responses` per
 * session, each model call a `response.create` client event answered by the same server events a streamed
 * HTTP response carries (read by openai_responses.ts's ResponsesStream, as on HTTP). The gain is on long tool
 * sessions: no request per round, and a call that only adds to the previous one on this connection sends
 * just the new input items with `previous_response_id` (the server keeps the latest response of the
 * connection in memory, `store: false` included). Anything else — the first call, a transcript compaction or
 * redaction changed, another model, a new connection — sends the whole input, as HTTP does.
 *
 * The openai SDK's own ResponsesWS needs the npm `ws` package, and Deno's built-in WebSocket stalls on
 * messages of a kilobyte or more (openai_ws_socket.ts says why): the connection is our own small client.
 * The URL and handshake headers come from the SDK client's own request building: `Authorization: Bearer`
 * for OpenAI, `api-key` and the `api-version` query for Azure, exactly as its HTTP requests carry them. The
 * event types are the SDK's.
 */
import OpenAI from "./openai_sdk.ts";
import { ResponsesStream, toInputItems } from "./openai_responses.ts";
import { FrameSocket, WebSocketRefused } from "./openai_ws_socket.ts";
import { ResponsesSocketClosed } from "./openai_responses_errors.ts";

export { ResponsesSocketClosed };

type ResponsesParams = OpenAI.Responses.ResponseCreateParamsNonStreaming;
type InputItem = OpenAI.Responses.ResponseInputItem;
type ServerEvent = OpenAI.Responses.ResponseStreamEvent;

export interface ResponsesSocketOptions {
  /** The client whose request building gives the URL and handshake headers (its auth, its default query). */
  client: OpenAI;
}

export interface SocketCallOptions {
  signal: AbortSignal;
  /** Every frame received for this call, with its length: the idle watch's progress. */
  onFrame?: (chars: number) => void;
}

/** What the connection's latest response continues from: its id, model and everything it has seen. */
interface Chain {
  id: string;
  model: string;
  /** The input items as sent in full, then the reply's items as the next input will carry them. */
  items: string[];
}

/** The error event of the WebSocket mode: `{type: "error", status, error: {code, message, param}}`. */
interface SocketErrorEvent {
  type: "error";
  status?: number;
  error?: { type?: string; code?: string | null; message?: string; param?: string | null };
}

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** One open (or opening) connection and the frames it received that no call has read yet. */
interface Connection {
  socket: FrameSocket;
  frames: string[];
  /** Why it ended, once it has: every later read raises it. */
  closed: ResponsesSocketClosed | null;
  /** The reader waiting for the next frame. */
  wake: (() => void) | null;
}

/** One WebSocket connection at a time, opened on first use and again after it closes. */
export class ResponsesSocket {
  readonly #options: ResponsesSocketOptions;
  #connection: Connection | null = null;
  #chain: Chain | null = null;
  /** Calls on one connection are answered one at a time: a second waits for the first. */
  #queue: Promise<void> = Promise.resolve();
  /** Connections being closed, for close() to wait on. */
  readonly #closing = new Set<Promise<void>>();
  /** The progress callback of the call in flight. */
  #onFrame: ((chars: number) => void) | undefined;

  constructor(options: ResponsesSocketOptions) {
    this.#options = options;
  }

  /**
   * One response: sends `response.create` and yields the server's events up to and including the terminal
   * one. An `error` event carrying a status is raised as that HTTP status would be; a closed connection as
   * {@linkcode ResponsesSocketClosed}; an abort closes the connection (the server cannot be told to stop
   * answering on it) and raises the signal's reason.
   */
  async *events(body: ResponsesParams, call: SocketCallOptions): AsyncGenerator<ServerEvent> {
    const { signal } = call;
    const { promise: turnDone, resolve: release } = Promise.withResolvers<void>();
    const before = this.#queue;
    this.#queue = turnDone;
    await before;
    this.#onFrame = call.onFrame;
    const abort = () => this.#drop("the call was stopped");
    signal.addEventListener("abort", abort, { once: true });
    // Set once the server has ended its answer; leaving earlier leaves unread frames: the connection goes.
    let answered = false;
    try {
      signal.throwIfAborted();
      const connection = await this.#open(signal);
      const input = body.input as InputItem[];
      const model = body.model as string;
      const items = input.map((item) => JSON.stringify(item));
      let continued = this.#continues(model, items);
      for (;;) {
        const chain = this.#chain;
        const event = continued && chain
          ? { ...body, input: input.slice(chain.items.length), previous_response_id: chain.id }
          : body;
        this.#chain = null;
        await connection.socket.send(JSON.stringify({ type: "response.create", ...event })).catch(() => {
          throw connection.closed ??
            new ResponsesSocketClosed("the WebSocket closed before the call was sent");
        });
        // The reply as the next call's input will carry it: read by the one event mapping there is.
        const mirror = new ResponsesStream();
        let resend = false;
        for (;;) {
          const parsed = JSON.parse(await next(connection, signal)) as ServerEvent | SocketErrorEvent;
          if (parsed.type === "error" && ("status" in parsed || "error" in parsed)) {
            answered = true;
            const error = (parsed as SocketErrorEvent).error ?? {};
            // The connection lost the response this one continues: the documented remedy is the whole input.
            if (continued && error.code === "previous_response_not_found") {
              continued = false;
              resend = true;
              answered = false;
              break;
            }
            throw new OpenAI.APIError((parsed as SocketErrorEvent).status, error, error.message, undefined);
          }
          const server = parsed as ServerEvent;
          if (TERMINAL.has(server.type) || server.type === "error") answered = true;
          mirror.add(server);
          if (server.type === "response.completed") {
            this.#chain = {
              id: server.response.id,
              model,
              items: [...items, ...toInputItems(mirror.result().message).map((item) => JSON.stringify(item))],
            };
          }
          yield server;
          if (answered) return;
        }
        if (!resend) return;
      }
    } finally {
      signal.removeEventListener("abort", abort);
      if (signal.aborted || !answered) this.#drop("the call was stopped");
      this.#onFrame = undefined;
      release();
    }
  }

  /** Closes the connection; the next call opens another. Resolves once every connection is released. */
  async close(): Promise<void> {
    this.#drop("the session closed the WebSocket");
    while (this.#closing.size) await Promise.all([...this.#closing]);
  }

  #continues(model: string, items: string[]): boolean {
    const chain = this.#chain;
    if (!chain || chain.model !== model || items.length <= chain.items.length) return false;
    return chain.items.every((item, i) => item === items[i]);
  }

  async #open(signal: AbortSignal): Promise<Connection> {
    const current = this.#connection;
    if (current && !current.closed && current.socket.open) return current;
    this.#drop("reconnecting");
    const { url, req } = await this.#options.client.buildRequest({ method: "get", path: "/responses" });
    const frames: string[] = [];
    const state: Omit<Connection, "socket"> = { frames, closed: null, wake: null };
    let socket: FrameSocket;
    try {
      socket = await FrameSocket.connect(url.replace(/^http/, "ws"), {
        headers: req.headers as Headers,
        signal,
        onMessage: (text) => {
          this.#onFrame?.(text.length);
          frames.push(text);
          state.wake?.();
        },
        onClose: (code, reason) => {
          end(
            state,
            new ResponsesSocketClosed(
              `the server closed the WebSocket (code ${code}${reason ? `: ${reason}` : ""})`,
            ),
          );
          if (this.#connection?.frames === frames) {
            this.#connection = null;
            this.#chain = null;
          }
        },
      });
    } catch (error) {
      if (error instanceof WebSocketRefused) throw new ResponsesSocketClosed(error.message, error.status);
      throw error;
    }
    const connection: Connection = Object.assign(state, { socket });
    this.#connection = connection;
    return connection;
  }

  /** Forgets the connection (closing it if open) and what it continues from. */
  #drop(why: string): void {
    const connection = this.#connection;
    this.#connection = null;
    this.#chain = null;
    if (!connection) return;
    end(connection, new ResponsesSocketClosed(why));
    const closing = connection.socket.close(1000, "done");
    this.#closing.add(closing);
    void closing.finally(() => this.#closing.delete(closing));
  }
}

function end(connection: Pick<Connection, "closed" | "wake">, why: ResponsesSocketClosed): void {
  connection.closed ??= why;
  connection.wake?.();
}

/** The next frame of the connection; raises why it closed, or the signal's reason. */
async function next(connection: Connection, signal: AbortSignal): Promise<string> {
  for (;;) {
    signal.throwIfAborted();
    const frame = connection.frames.shift();
    if (frame !== undefined) return frame;
    if (connection.closed) throw connection.closed;
    const { promise, resolve } = Promise.withResolvers<void>();
    const wake = () => resolve();
    connection.wake = wake;
    signal.addEventListener("abort", wake, { once: true });
    await promise;
    signal.removeEventListener("abort", wake);
    connection.wake = null;
  }
}
