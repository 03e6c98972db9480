/**
 * JSON-RPC 2.0 wire shapes and the error codes of `hermes rpc` (docs/rpc.md).
 *
 * Standard codes:
 * - `-32700` parse error: the line is not JSON (answered with `id: null`; the server lives on)
 * - `-32600` invalid request: not a request object, wrong `jsonrpc`, bad `id`, empty batch, line too large
 * - `-32601` method not found
 * - `-32602` invalid params: `data.path` names the offending param (`"session_id"`, `"inputs.days"`),
 *   `data.issues` lists every problem
 * - `-32603` internal error (a bug; the message says what failed)
 *
 * Application codes:
 * - `-32001` session not found (unknown id or ambiguous prefix)
 * - `-32002` session busy (delete/archive of a session with a running turn, or a session another process holds)
 * - `-32003` cancelled: `session.cancel` stopped the turn (running or queued); `data.result` is the turn's
 *   result object (status `interrupted`, terminal_reason `cancelled`, the usage spent so far)
 * - `-32004` invalid input: a job file or inline job fails validation, a missing input, an unknown slash command
 * - `-32005` run failed: the session could not run (provider set-up, plugin start-up)
 * - `-32006` server shutting down: the request arrived after `shutdown`
 * - `-32007` store unavailable: the store could not be reached (or stayed locked) for longer than
 *   `store.retry`; nothing was changed by the request, the server keeps serving, and the request may be sent
 *   again (`data.reason` is `store_unavailable`)
 */

export type JsonRpcId = string | number | null;

export const ErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  sessionNotFound: -32001,
  sessionBusy: -32002,
  cancelled: -32003,
  invalidInput: -32004,
  runFailed: -32005,
  shuttingDown: -32006,
  storeUnavailable: -32007,
} as const;

/** An error answered to the client as `{code, message, data?}`. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }
}

export interface ErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Serialises a success response. `result` undefined becomes `null` (JSON-RPC requires the member). */
export function resultLine(id: JsonRpcId, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result ?? null)}}`;
}

export function errorLine(id: JsonRpcId, error: ErrorObject): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify(error)}}`;
}

export function notificationLine(method: string, params: unknown): string {
  return `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

export function toErrorObject(error: RpcError): ErrorObject {
  return error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data };
}
