/**
 * A scripted OpenAI Responses API server for tests: POST /v1/responses answers from a list of
 * {@linkcode ResponsesReply}, as one JSON response or as the documented stream of server-sent events
 * (`response.created`, `response.in_progress`, `response.output_item.added`/`.done`, content parts,
 * `response.output_text.delta`/`.done`, `response.function_call_arguments.delta`/`.done`, reasoning summary
 * parts, then `response.completed`, `response.incomplete` or `response.failed`). Every object it sends is
 * typed with the SDK's own types, which are generated from OpenAI's OpenAPI description: a wire shape that
 * drifts from it fails the type check.
 *
 * It is stateless as OpenAI is with `store: false`: a reasoning item it issued is accepted back only with the
 * encrypted content it issued (a reasoning item without it is refused as OpenAI refuses it), and a
 * function_call it issued together with reasoning is accepted back only behind that reasoning; a
 * function_call_output needs its function_call before it.
 */
import type OpenAI from "../../runtime/providers/openai_sdk.ts";
import { errorResponse, sleep } from "./openai_server.ts";

type WireResponse = Omit<OpenAI.Responses.Response, "output_text">;
type OutputItem = OpenAI.Responses.ResponseOutputItem;
type StreamEvent = OpenAI.Responses.ResponseStreamEvent;
/** An event before it is numbered (each member of the union on its own). */
type WithoutSequence<T> = T extends unknown ? Omit<T, "sequence_number"> : never;

/** One scripted reply. */
export interface ResponsesReply {
  /** The model's reasoning: a reasoning item (encrypted content, this text as its summary) first. */
  reasoning?: string;
  content?: string;
  /** A refusal content part instead of text. */
  refusal?: string;
  tool_calls?: { name: string; arguments?: Record<string, unknown> | string; id?: string }[];
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cached_tokens?: number;
    reasoning_tokens?: number;
  };
  /** How the response ends (default completed). */
  ending?: "completed" | "max_output_tokens" | "content_filter" | "failed";
  /** With ending failed: the response's error. */
  failure?: { code: OpenAI.Responses.ResponseError["code"]; message: string };
  /** Fail the HTTP request instead of answering. */
  error?: { status: number; message: string; code?: string };
  /** The stream stops after this many events, without a terminal event (WebSocket: the connection closes). */
  cut_after?: number;
  /** WebSocket mode: the connection does not keep this response, so a call continuing from it is refused. */
  forget?: boolean;
  delay_ms?: number;
}

/** The request body as sent; everything is kept in `requests`. */
export type ResponsesBody = Record<string, unknown> & {
  model?: string;
  input?: Record<string, unknown>[];
  stream?: boolean;
};

export interface ResponsesServerOptions {
  script?: ResponsesReply[];
  /** Answers from the request (a model that reads the transcript); the script is used when it returns undefined. */
  respond?: (body: ResponsesBody, index: number) => ResponsesReply | undefined;
  /** Requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Speak Azure OpenAI: POST /openai/responses?api-version=VERSION with an `api-key` header. */
  azure?: { apiKey: string; apiVersion: string };
  /** Streamed text and arguments go in pieces of at most this many characters (default 5). */
  chunkChars?: number;
  /** PEM certificate and key: serve HTTPS (and WSS) on 127.0.0.1. */
  tls?: { cert: string; key: string };
}

export interface ResponsesServer {
  /** Base URL ending in /v1. */
  readonly url: string;
  readonly requests: ResponsesBody[];
  /** Each request's status as answered (200, or the refusal's). */
  readonly statuses: number[];
  /** The path and query of every request. */
  readonly urls: string[];
  /** Every reply's usage as put on the wire, in order (refused requests have none). */
  readonly usages: OpenAI.Responses.ResponseUsage[];
  /**
   * WebSocket mode: every client event as sent (`requests` holds each as the model saw it, a
   * `previous_response_id` expanded into the input it continues).
   */
  readonly frames: ResponsesBody[];
  /** WebSocket mode: every connection accepted, in order. */
  readonly connections: WebSocket[];
  /** WebSocket mode: the close code of each connection that ended, in the order they ended (1006: no close frame). */
  readonly closeCodes: number[];
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const TOP_LEVEL = new Set([
  "model",
  "input",
  "instructions",
  "store",
  "include",
  "reasoning",
  "tools",
  "tool_choice",
  "max_output_tokens",
  "temperature",
  "top_p",
  "prompt_cache_key",
  "text",
  "stream",
  "stream_options",
  "parallel_tool_calls",
  "metadata",
  "previous_response_id",
  "truncation",
  "user",
  "service_tier",
  "background",
  "safety_identifier",
]);

export async function startResponsesServer(options: ResponsesServerOptions = {}): Promise<ResponsesServer> {
  const script = [...(options.script ?? [])];
  const chunkChars = Math.max(1, options.chunkChars ?? 5);
  const requests: ResponsesBody[] = [];
  const statuses: number[] = [];
  const urls: string[] = [];
  const usages: OpenAI.Responses.ResponseUsage[] = [];
  const closing = new AbortController();
  const frames: ResponsesBody[] = [];
  const connections: WebSocket[] = [];
  const closeCodes: number[] = [];
  /** Encrypted content issued, by reasoning item id. */
  const issued = new Map<string, string>();
  /** The reasoning item ids issued with each function call, by call id. */
  const callReasoning = new Map<string, string[]>();
  let served = 0;
  let counter = 0;

  /** One request's answer: a refusal, or the response built from the reply (issued items remembered). */
  const answer = async (
    body: ResponsesBody,
    authorized: boolean,
  ): Promise<
    | { refused: { status: number; message: string; code: string } }
    | { response: WireResponse; reply: ResponsesReply }
  > => {
    requests.push(body);
    const refused = (status: number, message: string, code: string) => {
      statuses.push(status);
      return { refused: { status, message, code } };
    };
    if (!authorized) return refused(401, "Incorrect API key provided", "invalid_api_key");
    const problem = requestProblem(body, { issued, callReasoning });
    if (problem) return refused(400, problem, "invalid_request_error");
    const index = requests.length - 1;
    const reply = options.respond?.(body, index) ?? script[served++];
    if (!reply) return refused(500, "script exhausted", "server_error");
    if (reply.delay_ms) await sleep(reply.delay_ms, closing.signal);
    if (reply.error) return refused(reply.error.status, reply.error.message, reply.error.code ?? "");
    statuses.push(200);
    const response = buildResponse(reply, body, ++counter);
    for (const item of response.output) {
      if (item.type === "reasoning") issued.set(item.id, item.encrypted_content ?? "");
    }
    const reasoningIds = response.output.flatMap((item) => item.type === "reasoning" ? [item.id] : []);
    for (const item of response.output) {
      if (item.type === "function_call" && reasoningIds.length) callReasoning.set(item.call_id, reasoningIds);
    }
    if (response.usage) usages.push(response.usage);
    return { response, reply };
  };

  /**
   * WebSocket mode: each `response.create` client event is answered with the streamed events as text frames.
   * The connection keeps its latest completed response, so a `previous_response_id` naming it continues
   * from its input and output (any other is `previous_response_not_found`). A reply's `cut_after` sends that
   * many events and then closes the connection.
   */
  const socketSession = (socket: WebSocket) => {
    let latest: { id: string; items: Record<string, unknown>[] } | null = null;
    const sendError = (status: number, code: string, message: string, param: string | null = null) => {
      const type = status >= 500 ? "server_error" : "invalid_request_error";
      socket.send(JSON.stringify({ type: "error", status, error: { type, code, message, param } }));
    };
    let queue = Promise.resolve();
    socket.onmessage = (message) => {
      // One response at a time per connection, in the order asked.
      queue = queue.then(async () => {
        const event = JSON.parse(String(message.data)) as ResponsesBody & { type?: string };
        frames.push(event);
        if (event.type !== "response.create") {
          return sendError(400, "invalid_request_error", `Invalid value: '${event.type}'.`, "type");
        }
        const { type: _type, previous_response_id: previous, ...rest } = event;
        for (const key of ["stream", "background"]) {
          if (key in rest) {
            return sendError(400, "invalid_request_error", `Unknown parameter: '${key}'.`, key);
          }
        }
        const body: ResponsesBody = { ...rest };
        if (previous !== undefined) {
          if (latest === null || latest.id !== previous) {
            return sendError(
              400,
              "previous_response_not_found",
              `Previous response with id '${previous}' not found.`,
              "previous_response_id",
            );
          }
          body.input = [...latest.items, ...(rest.input ?? [])];
        }
        latest = null;
        const answered = await answer(body, true);
        if ("refused" in answered) {
          const { status, code, message: text } = answered.refused;
          return sendError(status, code, text);
        }
        const { response, reply } = answered;
        const list = events(response, chunkChars);
        for (const item of list.slice(0, reply.cut_after ?? list.length)) socket.send(JSON.stringify(item));
        if (reply.cut_after !== undefined) return socket.close(1011, "dropped by the test");
        if (response.status === "completed" && !reply.forget) {
          latest = {
            id: response.id,
            items: [...(body.input ?? []), ...response.output as unknown as Record<string, unknown>[]],
          };
        }
      }).catch(() => {});
    };
  };

  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    urls.push(`${url.pathname}${url.search}`);
    let path = url.pathname;
    let authorized = options.apiKey === undefined ||
      request.headers.get("authorization") === `Bearer ${options.apiKey}`;
    if (options.azure) {
      if (path !== "/openai/responses" || url.searchParams.get("api-version") !== options.azure.apiVersion) {
        return errorResponse(404, "Resource not found", "invalid_request_error", "404");
      }
      path = "/v1/responses";
      authorized = request.headers.get("api-key") === options.azure.apiKey;
    }
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket" && path === "/v1/responses") {
      // The handshake is refused as the HTTP request would be: without the key, 401.
      if (!authorized) {
        return errorResponse(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key");
      }
      const { socket, response } = Deno.upgradeWebSocket(request);
      connections.push(socket);
      socket.addEventListener("close", (event) => closeCodes.push(event.code));
      socketSession(socket);
      return response;
    }
    if (request.method !== "POST" || path !== "/v1/responses") {
      return errorResponse(
        404,
        `Unknown route ${request.method} ${path}`,
        "invalid_request_error",
        "not_found",
      );
    }
    const body = await request.json() as ResponsesBody;
    const answered = await answer(body, authorized);
    if ("refused" in answered) {
      const { status, message, code } = answered.refused;
      const type = status >= 500 ? "server_error" : "invalid_request_error";
      return errorResponse(status, message, type, code || undefined);
    }
    const { response, reply } = answered;
    if (!body.stream) return Response.json(response);
    return sse(events(response, chunkChars), reply.cut_after);
  };

  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: resolve, ...(options.tls ?? {}) },
    handler,
  );
  const address = await listening;
  const close = async () => {
    closing.abort();
    for (const socket of connections) {
      if (socket.readyState === WebSocket.OPEN) socket.close(1001, "server closing");
    }
    await server.shutdown();
  };
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${address.port}/v1`,
    requests,
    statuses,
    urls,
    usages,
    frames,
    connections,
    closeCodes,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * What OpenAI refuses of a request body, in its words: an unknown parameter, an item of a shape the API
 * does not take, a reasoning item without the encrypted content it was issued with, a function call without
 * the reasoning it was issued behind, a call output without its call, a temperature for a reasoning model.
 */
export function requestProblem(
  body: ResponsesBody,
  state: { issued: Map<string, string>; callReasoning: Map<string, string[]> },
): string | undefined {
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key)) return `Unknown parameter: '${key}'.`;
  }
  if (typeof body.model !== "string" || !Array.isArray(body.input)) {
    return "Missing required parameter: 'input'.";
  }
  const reasoningModel = /^(o[1-9]|gpt-5)/.test(body.model) && !body.model.includes("chat");
  if (reasoningModel && body.temperature !== undefined) {
    return "Unsupported parameter: 'temperature' is not supported with this model.";
  }
  const calls = new Set<string>();
  const seen: string[] = [];
  for (const [i, item] of body.input.entries()) {
    const type = item.type ?? "message";
    if (type === "message") {
      if (!["user", "system", "developer", "assistant"].includes(String(item.role))) {
        return `Invalid value: '${item.role}'. Supported values are: 'user', 'system', 'developer', and 'assistant'.`;
      }
      if (typeof item.content !== "string" && !Array.isArray(item.content)) {
        return `Missing required parameter: 'input[${i}].content'.`;
      }
    } else if (type === "reasoning") {
      const id = String(item.id);
      if (body.store !== false) continue;
      if (typeof item.encrypted_content !== "string") {
        return `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. ` +
          "Try again with `store` set to true, or remove this item from your input.";
      }
      if (state.issued.get(id) !== item.encrypted_content) {
        return `The encrypted content for item ${id} could not be verified.`;
      }
      if (!Array.isArray(item.summary)) return `Missing required parameter: 'input[${i}].summary'.`;
      seen.push(id);
    } else if (type === "function_call") {
      for (const key of ["call_id", "name", "arguments"]) {
        if (typeof item[key] !== "string") return `Missing required parameter: 'input[${i}].${key}'.`;
      }
      const needed = state.callReasoning.get(String(item.call_id)) ?? [];
      const missing = needed.find((id) => !seen.includes(id));
      if (missing) {
        return `Item 'input[${i}]' of type 'function_call' was provided without its required 'reasoning' item: ` +
          `'${missing}'.`;
      }
      calls.add(String(item.call_id));
    } else if (type === "function_call_output") {
      if (!calls.has(String(item.call_id))) {
        return `No tool call found for function call output with call_id ${item.call_id}.`;
      }
      if (typeof item.output !== "string" && !Array.isArray(item.output)) {
        return `Missing required parameter: 'input[${i}].output'.`;
      }
    } else {
      return `Invalid value: '${type}'.`;
    }
  }
  return undefined;
}

/**
 * The encrypted content the server issues for reasoning item `n`: opaque to the client and unique per item,
 * so a mixed-up one is caught; like real ciphertext it does not contain the reasoning text in any encoding.
 */
export function sealed(n: number, reasoning: string): string {
  let hash = 0x811c9dc5;
  for (const char of `${n}:${reasoning}`) hash = Math.imul(hash ^ char.codePointAt(0)!, 0x01000193) >>> 0;
  return `gAAAAB${n}_${hash.toString(16).padStart(8, "0")}`;
}

function buildResponse(reply: ResponsesReply, body: ResponsesBody, n: number): WireResponse {
  const output: OutputItem[] = [];
  if (reply.reasoning !== undefined) {
    output.push({
      type: "reasoning",
      id: `rs_${n}`,
      summary: [{ type: "summary_text", text: reply.reasoning }],
      encrypted_content: sealed(n, reply.reasoning),
    });
  }
  if (reply.content !== undefined || reply.refusal !== undefined) {
    output.push({
      type: "message",
      id: `msg_${n}`,
      role: "assistant",
      status: "completed",
      content: reply.refusal !== undefined
        ? [{ type: "refusal", refusal: reply.refusal }]
        : [{ type: "output_text", text: reply.content ?? "", annotations: [] }],
    });
  }
  (reply.tool_calls ?? []).forEach((call, i) => {
    output.push({
      type: "function_call",
      id: `fc_${n}_${i + 1}`,
      call_id: call.id ?? `call_${n}_${i + 1}`,
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
      status: "completed",
    });
  });
  const chars = JSON.stringify(body.input ?? []).length;
  const input_tokens = reply.usage?.input_tokens ?? Math.ceil(chars / 4);
  const output_tokens = reply.usage?.output_tokens ?? 10 + n;
  const ending = reply.ending ?? "completed";
  return {
    id: `resp_${n}`,
    object: "response",
    created_at: 1_700_000_000 + n,
    status: ending === "failed" ? "failed" : ending === "completed" ? "completed" : "incomplete",
    error: ending === "failed"
      ? (reply.failure ?? { code: "server_error", message: "The model failed." })
      : null,
    incomplete_details: ending === "max_output_tokens" || ending === "content_filter"
      ? { reason: ending }
      : null,
    instructions: null,
    metadata: null,
    model: String(body.model),
    output: ending === "failed" ? [] : output,
    parallel_tool_calls: true,
    temperature: typeof body.temperature === "number" ? body.temperature : null,
    tool_choice: "auto",
    tools: (body.tools ?? []) as OpenAI.Responses.Tool[],
    top_p: null,
    usage: {
      input_tokens,
      input_tokens_details: { cached_tokens: reply.usage?.cached_tokens ?? 0 },
      output_tokens,
      output_tokens_details: { reasoning_tokens: reply.usage?.reasoning_tokens ?? 0 },
      total_tokens: input_tokens + output_tokens,
    },
  };
}

/** The documented event sequence for a finished response. */
function events(response: WireResponse, chunkChars: number): StreamEvent[] {
  const out: StreamEvent[] = [];
  let sequence_number = 0;
  const push = (event: WithoutSequence<StreamEvent>) => {
    out.push({ ...event, sequence_number: sequence_number++ } as StreamEvent);
  };
  // `output_text` is the SDK's own convenience, never on the wire: the one field the types are told of.
  const sdk = (value: WireResponse) => value as OpenAI.Responses.Response;
  const start: WireResponse = {
    ...response,
    status: "in_progress",
    output: [],
    error: null,
    incomplete_details: null,
  };
  // Usage comes with the terminal event only.
  delete start.usage;
  push({ type: "response.created", response: sdk(start) });
  push({ type: "response.in_progress", response: sdk(start) });
  response.output.forEach((item, output_index) => {
    if (item.type === "message") {
      push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      item.content.forEach((part, content_index) => {
        const at = { item_id: item.id, output_index, content_index };
        if (part.type === "output_text") {
          push({ type: "response.content_part.added", ...at, part: { ...part, text: "" } });
          for (const delta of pieces(part.text, chunkChars)) {
            push({ type: "response.output_text.delta", ...at, delta, logprobs: [] });
          }
          push({ type: "response.output_text.done", ...at, text: part.text, logprobs: [] });
        } else {
          push({ type: "response.content_part.added", ...at, part: { ...part, refusal: "" } });
          for (const delta of pieces(part.refusal, chunkChars)) {
            push({ type: "response.refusal.delta", ...at, delta });
          }
          push({ type: "response.refusal.done", ...at, refusal: part.refusal });
        }
        push({ type: "response.content_part.done", ...at, part });
      });
    } else if (item.type === "function_call") {
      const item_id = item.id ?? "";
      push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, arguments: "", status: "in_progress" },
      });
      for (const delta of pieces(item.arguments, chunkChars)) {
        push({ type: "response.function_call_arguments.delta", item_id, output_index, delta });
      }
      push({
        type: "response.function_call_arguments.done",
        item_id,
        output_index,
        name: item.name,
        arguments: item.arguments,
      });
    } else if (item.type === "reasoning") {
      push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, summary: [], encrypted_content: null },
      });
      item.summary.forEach((part, summary_index) => {
        const at = { item_id: item.id, output_index, summary_index };
        push({ type: "response.reasoning_summary_part.added", ...at, part: { ...part, text: "" } });
        for (const delta of pieces(part.text, chunkChars)) {
          push({ type: "response.reasoning_summary_text.delta", ...at, delta });
        }
        push({ type: "response.reasoning_summary_text.done", ...at, text: part.text });
        push({ type: "response.reasoning_summary_part.done", ...at, part });
      });
    }
    push({ type: "response.output_item.done", output_index, item });
  });
  const terminal = response.status === "failed"
    ? "response.failed"
    : response.status === "incomplete"
    ? "response.incomplete"
    : "response.completed";
  push({ type: terminal, response: sdk(response) });
  return out;
}

function sse(list: StreamEvent[], cutAfter: number | undefined): Response {
  const encoder = new TextEncoder();
  const lines = list.slice(0, cutAfter ?? list.length).map((event) =>
    `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
  );
  // One enqueue per event, so the client really receives several reads.
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const line = lines.shift();
      if (line === undefined) controller.close();
      else controller.enqueue(encoder.encode(line));
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}
