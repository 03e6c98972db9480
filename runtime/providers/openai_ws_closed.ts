/**
 * The error a Responses WebSocket call ends with when its connection closes early (openai_ws.ts), in a module
 * of its own so that openai.ts can recognise it without loading the WebSocket transport, which a job loads
 * only with `transport: websocket`.
 */

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
