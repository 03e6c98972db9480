/**
 * A JSON-RPC 2.0 dispatcher over lines: envelopes, batches, notifications, typed params and error mapping.
 * Requests run concurrently; a handler that returns a plain value is answered in the same tick (no promise
 * chain on the hot path), and every response of one tick leaves in one write (see LineWriter).
 */
import type { z } from "zod";
import type { Logger } from "../core/log.ts";
import type { LineWriter } from "../core/lines.ts";
import {
  ErrorCode,
  errorLine,
  type ErrorObject,
  type JsonRpcId,
  notificationLine,
  resultLine,
  RpcError,
  toErrorObject,
} from "./protocol.ts";

export interface RequestContext {
  /** The request id; undefined for a notification (no response is sent). */
  id: JsonRpcId | undefined;
}

export interface RpcMethod<P = unknown> {
  /** Validates `params` (absent params are `{}`); methods without a schema accept and ignore any params. */
  params?: z.ZodType;
  handler(params: P, context: RequestContext): unknown;
}

// deno-lint-ignore no-explicit-any
export type MethodTable = Map<string, RpcMethod<any>>;

export interface RpcServerOptions {
  methods: MethodTable;
  writer: LineWriter;
  log: Logger;
  /** Turns a non-RpcError thrown by a handler into an error object; default: internal error. */
  mapError?: (error: unknown) => RpcError | undefined;
}

type Reply = string | undefined;

export class RpcServer {
  #o: RpcServerOptions;
  #inFlight = 0;
  #idleWaiters: { below: number; resolve: () => void }[] = [];
  #closing = false;
  /** Requests this server sent to its client, waiting for their responses, by id. */
  #asked = new Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #askedCount = 0;

  constructor(options: RpcServerOptions) {
    this.#o = options;
  }

  /** Requests answered so far are written; requests still running are counted here. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** After this, new requests are answered with "shutting down" (-32006); running ones finish. */
  close(): void {
    this.#closing = true;
  }

  /** Resolves when at most `others` requests are running (`shutdown` waits with 1: itself). */
  idle(others = 0): Promise<void> {
    if (this.#inFlight <= others) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push({ below: others, resolve }));
  }

  notify(method: string, params: unknown): void {
    this.#o.writer.line(notificationLine(method, params));
  }

  /**
   * Sends a request to the client (ids `hermes-1`, `hermes-2`, …) and resolves with its result; rejects with
   * its error, or when `signal` aborts (the answer, should it come, is then ignored).
   */
  request(method: string, params: unknown, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    const id = `hermes-${++this.#askedCount}`;
    const { signal } = options;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.#asked.delete(id);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.#asked.set(id, {
        resolve: (value) => (done(), resolve(value)),
        reject: (error) => (done(), reject(error)),
      });
      this.#o.writer.line(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /** A response of the client to one of this server's requests; false when the message is not one. */
  #response(message: Record<string, unknown>): boolean {
    if ("method" in message || !("result" in message || "error" in message)) return false;
    const waiting = typeof message.id === "string" ? this.#asked.get(message.id) : undefined;
    if (!waiting) {
      this.#o.log.debug(`rpc: ignoring a response to no request of ours (id ${JSON.stringify(message.id)})`);
      return true;
    }
    this.#asked.delete(message.id as string);
    if ("error" in message) {
      const error = message.error as { message?: unknown } | null;
      waiting.reject(
        new Error(typeof error?.message === "string" ? error.message : "the client answered an error"),
      );
    } else waiting.resolve(message.result);
    return true;
  }

  /** Answers a line longer than the size limit (the request id cannot be known). */
  oversize(bytes: number, limit: number): void {
    this.#o.writer.line(errorLine(null, {
      code: ErrorCode.invalidRequest,
      message: `Invalid request: the line exceeds the size limit of ${limit} bytes; it was discarded`,
      data: { limit_bytes: limit, seen_bytes: bytes },
    }));
  }

  /** Handles one line of input: a request, a notification or a batch. */
  handleLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      this.#o.writer.line(errorLine(null, {
        code: ErrorCode.parseError,
        message: `Parse error: ${(error as Error).message}`,
      }));
      return;
    }
    if (Array.isArray(message)) {
      this.#batch(message);
      return;
    }
    const reply = this.#request(message);
    if (typeof reply === "string") this.#o.writer.line(reply);
    else if (reply !== undefined) {
      this.#track(reply.then((text) => text !== undefined && this.#o.writer.line(text)));
    }
  }

  #batch(messages: unknown[]): void {
    if (messages.length === 0) {
      this.#o.writer.line(
        errorLine(null, { code: ErrorCode.invalidRequest, message: "Invalid request: empty batch" }),
      );
      return;
    }
    const replies = messages.map((m) => this.#request(m));
    const write = (texts: Reply[]) => {
      const answered = texts.filter((t): t is string => t !== undefined);
      if (answered.length > 0) this.#o.writer.line(`[${answered.join(",")}]`);
    };
    if (replies.every((r) => typeof r !== "object")) write(replies as Reply[]);
    else this.#track(Promise.all(replies).then(write));
  }

  #track(work: Promise<unknown>): void {
    this.#inFlight++;
    work.catch((error) => this.#o.log.error(`rpc: cannot write a response: ${error}`)).finally(() => {
      const count = --this.#inFlight;
      if (this.#idleWaiters.length === 0) return;
      const ready = this.#idleWaiters.filter((w) => count <= w.below);
      this.#idleWaiters = this.#idleWaiters.filter((w) => count > w.below);
      for (const waiter of ready) waiter.resolve();
    });
  }

  /** A reply string, undefined for a notification, or a promise of either. */
  #request(message: unknown): Reply | Promise<Reply> {
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      return errorLine(null, {
        code: ErrorCode.invalidRequest,
        message: "Invalid request: expected an object",
      });
    }
    if (this.#response(message as Record<string, unknown>)) return undefined;
    const { jsonrpc, method, params, id } = message as Record<string, unknown>;
    const hasId = "id" in message;
    const validId = id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
    if (hasId && !validId) {
      return errorLine(null, {
        code: ErrorCode.invalidRequest,
        message: "Invalid request: id must be a string, a number or null",
      });
    }
    const replyId = hasId ? id as JsonRpcId : null;
    if (jsonrpc !== "2.0") {
      return errorLine(replyId, {
        code: ErrorCode.invalidRequest,
        message: 'Invalid request: jsonrpc must be "2.0"',
      });
    }
    if (typeof method !== "string") {
      return errorLine(replyId, {
        code: ErrorCode.invalidRequest,
        message: "Invalid request: method must be a string",
      });
    }
    if (params !== undefined && (params === null || typeof params !== "object")) {
      return errorLine(replyId, {
        code: ErrorCode.invalidRequest,
        message: "Invalid request: params must be an object or an array",
      });
    }
    const answer = (value: unknown): Reply => hasId ? resultLine(replyId, value) : undefined;
    const fail = (error: ErrorObject): Reply => hasId ? errorLine(replyId, error) : undefined;
    const entry = this.#o.methods.get(method);
    if (!entry) return fail({ code: ErrorCode.methodNotFound, message: `Method not found: "${method}"` });
    if (this.#closing) {
      return fail({
        code: ErrorCode.shuttingDown,
        message: `Cannot run "${method}": the server is shutting down`,
      });
    }
    let value: unknown;
    try {
      value = entry.handler(entry.params ? parseParams(entry.params, params) : params, {
        id: hasId ? replyId : undefined,
      });
    } catch (error) {
      return fail(this.#errorObject(method, error));
    }
    if (!(value instanceof Promise)) return answer(value);
    return value.then(answer, (error) => fail(this.#errorObject(method, error)));
  }

  #errorObject(method: string, error: unknown): ErrorObject {
    if (error instanceof RpcError) return toErrorObject(error);
    const mapped = this.#o.mapError?.(error);
    if (mapped) return toErrorObject(mapped);
    this.#o.log.error(`rpc: ${method} failed: ${(error as Error)?.stack ?? error}`);
    return {
      code: ErrorCode.internalError,
      message: `Internal error in ${method}: ${(error as Error)?.message ?? error}`,
    };
  }
}

/** Validates params; a failure is -32602 with the first offending path in `data.path`. */
export function parseParams(schema: z.ZodType, params: unknown): unknown {
  if (Array.isArray(params)) {
    throw new RpcError(
      ErrorCode.invalidParams,
      "Invalid params: expected named params (an object), got an array",
      {
        path: "",
      },
    );
  }
  const result = schema.safeParse(params ?? {});
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const path = [...issue.path];
    if (issue.code === "unrecognized_keys") path.push(issue.keys[0]!);
    return { path: path.map(String).join("."), message: issue.message };
  });
  const first = issues[0]!;
  const where = first.path === "" ? "params" : `"${first.path}"`;
  throw new RpcError(ErrorCode.invalidParams, `Invalid params: ${where}: ${first.message}`, {
    path: first.path,
    issues,
  });
}
