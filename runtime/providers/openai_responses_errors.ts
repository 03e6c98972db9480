/**
 * The errors a Responses API call ends with when its reply ends early, over HTTP (openai_responses.ts) or a
 * WebSocket (openai_ws.ts), in a module of their own so that openai.ts's retry check recognises them without
 * loading the Responses API's modules, which a Chat Completions job (the default) loads at no point.
 */

/** The stream ended before its terminal event: worth another attempt. */
export class IncompleteResponseStream extends Error {
  constructor() {
    super("the stream ended before response.completed");
    this.name = "IncompleteResponseStream";
  }
}

/** The connection closed (or never opened) before the response's terminal event: worth another attempt. */
export class ResponsesSocketClosed extends Error {
  /** The HTTP status that refused the handshake, when it was refused. */
  readonly status: number | null;
  constructor(message: string, status: number | null = null) {
    super(message);
    this.name = "ResponsesSocketClosed";
    this.status = status;
  }
}
