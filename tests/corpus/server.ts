/**
 * The corpus server: a real OpenAI-compatible HTTP server (Chat Completions, streaming or not, tool calls as
 * the `openai` SDK expects) that plays a {@linkcode Corpus} and measures what a compaction strategy costs.
 *
 * ```ts
 * const corpus = toolHeavyCorpus({ turns: 40 });
 * await using server = await startCorpusServer({ corpus, window: 16_000, summary: "http500" });
 * await corpus.writeTo(dir, { base_url: server.url, window: 16_000 });
 * // hermes run job.yaml … (env CORPUS_KEY=anything)
 * assert.equal(server.records.filter((r) => r.over_window).length, 0);
 * const stats = server.stats(); // agent requests, summary calls, prompt/cached tokens, cost-weighted input …
 * ```
 *
 * - **Agent calls** (requests with tools): the answer is `corpus.reply(turn, step)`, placed from the request
 *   itself — its last message is the user turn (`[turn N]`, step 0) or a tool result after the call
 *   `call_tN_sS` (step S + 1) — so retries and rewritten transcripts replay correctly.
 * - **Summary calls** (no tools, or the `summaryModel`): answered by the `summary` behaviour
 *   (tests/corpus/summaries.ts): `ok`, `http500`, `hang`, `garbage`, `empty`, `longer`.
 * - **Prompt tokens** are the server's own estimate: chars/4 of the message contents, tool calls and tool
 *   definitions (JSON), reported as `usage.prompt_tokens`. A request above its window (`window` for agent
 *   calls, `summaryWindow` for summary calls) is recorded `over_window` and, by `overWindow`, rejected with
 *   OpenAI's HTTP 400 `context_length_exceeded` naming the limit (`reject`, default), silently truncated as
 *   llama.cpp and Ollama do (`truncate`: answered, `prompt_tokens` reports only the window), or `accept`ed.
 * - **Prefix cache** (tests/corpus/prefix_cache.ts): cached tokens = the longest prefix shared with one of
 *   the previous `cacheDepth` (8) answered requests to the same model, reported as
 *   `usage.prompt_tokens_details.cached_tokens` (omitted with `reportCached: false`).
 * - **Records**: one {@linkcode RequestRecord} per request, in arrival order, with `missing_turns` — user
 *   turns up to the current one that are neither in the request verbatim nor named by a summary or marker
 *   (a `[turn N]` marker or a `User turns covered: a–b` line). `inspect` sees every body as it arrives.
 */
import {
  type ChatRequestBody,
  completionResponse,
  errorResponse,
  type Reply,
  sleep,
  textOf,
} from "../_testing/openai_server.ts";
import { type Corpus, parseCallId, turnsMentioned } from "./corpus.ts";
import { cachedTokens, PrefixCache, segmentsOf } from "./prefix_cache.ts";
import {
  garbageSummary,
  longerSummary,
  okSummary,
  type SummaryBehaviour,
  turnsCovered,
} from "./summaries.ts";

export interface CorpusServerOptions {
  corpus: Corpus;
  /** The agent model's context window, in the server's tokens. */
  window: number;
  /** The summary model's window (default `window`). */
  summaryWindow?: number;
  /** What to do with a request above its window (default `reject`). */
  overWindow?: "reject" | "truncate" | "accept";
  /** Default `ok`. */
  summary?: SummaryBehaviour;
  /** How long `hang` waits before answering (default: until the server closes). */
  hangMs?: number;
  /** The summary model's name; requests naming it are summary calls even with tools (default `summary-model`). */
  summaryModel?: string;
  /** Previous requests the simulated cache remembers, per model (default 8). */
  cacheDepth?: number;
  /** Report `prompt_tokens_details.cached_tokens` (default true). */
  reportCached?: boolean;
  /** Streamed content comes in pieces of at most this many characters (default 64). */
  chunkChars?: number;
  /** Called with every chat completion body and its record, before the answer is sent. */
  inspect?: (body: ChatRequestBody, record: RequestRecord) => void;
}

export interface RequestRecord {
  /** Arrival order, from 0. */
  index: number;
  kind: "agent" | "summary";
  model: string;
  /** The server's estimate of the request (chars/4). */
  prompt_tokens: number;
  /** What `usage.prompt_tokens` reported (less than the estimate when `truncate` cut the request). */
  reported_prompt_tokens: number;
  cached_tokens: number;
  completion_tokens: number;
  /** The window the request was held to. */
  window: number;
  over_window: boolean;
  /** HTTP status answered (499: the server closed before a `hang` ended). */
  status: number;
  messages: number;
  stream: boolean;
  max_tokens: number | null;
  /** Agent calls: the corpus turn and step answered (null when the request could not be placed). */
  turn: number | null;
  step: number | null;
  /** Agent calls: user turns ≤ `turn` neither verbatim in the request nor named by a summary or marker. */
  missing_turns: number[];
}

export interface CorpusStats {
  agent_requests: number;
  summary_calls: number;
  /** Σ prompt tokens reported for answered agent requests. */
  prompt_tokens: number;
  cached_tokens: number;
  /** cached_tokens ÷ prompt_tokens (0 without requests). */
  cached_share: number;
  /** Σ prompt and completion tokens of answered summary calls. */
  summary_tokens: number;
  /** (prompt − cached) + 0.1 × cached + summary tokens: what the input costs when cached input is billed at 10 %. */
  cost_weighted_input: number;
  /** The largest agent request (estimate) and its share of the window. */
  max_request_tokens: number;
  max_request_share: number;
  /** The largest summary request and its share of the summary window. */
  max_summary_request_share: number;
  /** Requests above their window (agent and summary). */
  over_window: number;
  /** Requests answered with an error status. */
  failed: number;
  /** Agent requests with at least one missing user turn. */
  requests_missing_turns: number;
}

export interface CorpusServer extends AsyncDisposable {
  /** Base URL ending in /v1. */
  readonly url: string;
  readonly port: number;
  readonly records: readonly RequestRecord[];
  stats(): CorpusStats;
  close(): Promise<void>;
}

export async function startCorpusServer(options: CorpusServerOptions): Promise<CorpusServer> {
  const { corpus } = options;
  const summaryModel = options.summaryModel ?? "summary-model";
  const behaviour = options.summary ?? "ok";
  const overWindow = options.overWindow ?? "reject";
  const chunkChars = options.chunkChars ?? 64;
  const cache = new PrefixCache(options.cacheDepth ?? 8);
  const records: RequestRecord[] = [];
  const closing = new AbortController();

  const handler = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    if (request.method === "GET" && path === "/v1/models") {
      return Response.json({
        object: "list",
        data: [{ id: "agent-model", object: "model", created: 0, owned_by: "corpus" }],
      });
    }
    if (request.method !== "POST" || path !== "/v1/chat/completions") {
      return errorResponse(
        404,
        `Unknown route ${request.method} ${path}`,
        "invalid_request_error",
        "not_found",
      );
    }
    let body: ChatRequestBody;
    try {
      body = await request.json();
    } catch {
      return errorResponse(400, "Request body is not valid JSON", "invalid_request_error", "invalid_json");
    }
    const summary = body.model === summaryModel || (body.tools?.length ?? 0) === 0;
    const window = summary ? options.summaryWindow ?? options.window : options.window;
    const estimate = promptTokensOf(body);
    const place = summary ? null : placeOf(body);
    const record: RequestRecord = {
      index: records.length,
      kind: summary ? "summary" : "agent",
      model: body.model ?? "",
      prompt_tokens: estimate,
      reported_prompt_tokens: 0,
      cached_tokens: 0,
      completion_tokens: 0,
      window,
      over_window: estimate > window,
      status: 200,
      messages: body.messages?.length ?? 0,
      stream: body.stream === true,
      max_tokens: typeof body.max_tokens === "number" ? body.max_tokens : null,
      turn: place?.turn ?? null,
      step: place?.step ?? null,
      missing_turns: place ? missingTurns(body, corpus, place.turn) : [],
    };
    records.push(record);
    options.inspect?.(body, record);
    const fail = (status: number, message: string, type: string, code: string) => {
      record.status = status;
      return errorResponse(status, message, type, code);
    };
    if (record.over_window && overWindow === "reject") {
      return fail(
        400,
        `This model's maximum context length is ${window} tokens. However, your messages resulted in ` +
          `${estimate} tokens. Please reduce the length of the messages.`,
        "invalid_request_error",
        "context_length_exceeded",
      );
    }
    let content = "";
    let toolCalls: Reply["toolCalls"] = [];
    if (summary) {
      if (behaviour === "http500") {
        return fail(500, "The summary model failed", "server_error", "server_error");
      }
      if (behaviour === "hang") {
        const answered = await sleep(options.hangMs ?? 24 * 3600_000, closing.signal);
        if (!answered) {
          record.status = 499;
          return new Response(null, { status: 499 });
        }
      }
      const text = (body.messages ?? []).map((m) => textOf(m.content)).join("\n");
      content = behaviour === "garbage"
        ? garbageSummary()
        : behaviour === "empty"
        ? ""
        : behaviour === "longer"
        ? longerSummary(text)
        : okSummary(text);
    } else {
      if (!place) {
        return fail(
          500,
          "corpus server: cannot place the request (its last message is neither a corpus user turn nor " +
            "a tool result after a corpus tool call)",
          "server_error",
          "corpus_unplaced",
        );
      }
      const reply = corpus.reply(place.turn, place.step);
      if (reply.kind === "tool") toolCalls = [{ id: reply.id, name: reply.name, arguments: reply.arguments }];
      else content = reply.content;
    }
    const reported = record.over_window && overWindow === "truncate" ? window : estimate;
    const reading = cache.read(body);
    record.reported_prompt_tokens = reported;
    record.cached_tokens = cachedTokens(reported, reading);
    record.completion_tokens = Math.ceil(
      (content.length + toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0)) / 4,
    );
    const reply: Reply = {
      content,
      toolCalls,
      usage: {
        prompt_tokens: reported,
        completion_tokens: record.completion_tokens,
        total_tokens: reported + record.completion_tokens,
        ...(options.reportCached === false
          ? {}
          : { prompt_tokens_details: { cached_tokens: record.cached_tokens } }),
      },
    };
    return completionResponse(reply, {
      id: `chatcmpl-${record.index}`,
      model: body.model ?? "agent-model",
      chunkChars,
      body,
    });
  };

  const { promise: listening, resolve: onListening } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: onListening }, handler);
  const address = await listening;
  const close = () => {
    closing.abort();
    return server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    port: address.port,
    records,
    stats: () => statsOf(records),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The server's token estimate of a request: chars/4 of contents, tool calls and tool definitions. */
export function promptTokensOf(body: ChatRequestBody): number {
  return Math.ceil(promptCharsOf(body) / 4);
}

/** The characters {@linkcode promptTokensOf} counts (those the simulated cache compares). */
export function promptCharsOf(body: ChatRequestBody): number {
  return segmentsOf(body).reduce((n, s) => n + s.text.length, 0);
}

/** Which corpus turn and step a request asks for, from its last message. */
export function placeOf(body: ChatRequestBody): { turn: number; step: number } | null {
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  if (!last) return null;
  if (last.role === "user") {
    const turn = turnsMentioned(textOf(last.content)).at(-1);
    return turn === undefined ? null : { turn, step: 0 };
  }
  if (last.role !== "tool") return null;
  for (let i = messages.length - 1; i >= 0; i--) {
    const calls = messages[i]!.tool_calls as { id?: string }[] | undefined;
    if (messages[i]!.role !== "assistant" || !calls?.length) continue;
    const placed = parseCallId(calls.at(-1)?.id ?? "");
    return placed ? { turn: placed.turn, step: placed.step + 1 } : null;
  }
  return null;
}

function missingTurns(body: ChatRequestBody, corpus: Corpus, upTo: number): number[] {
  const present = new Set<number>();
  for (const m of body.messages ?? []) {
    if (m.role === "tool") continue;
    const text = textOf(m.content);
    if (m.role === "user") {
      for (const turn of turnsMentioned(text)) {
        if (text.includes(corpus.prompts[turn - 1] ?? "\u0000")) present.add(turn);
      }
    }
    if (m.role !== "user" || !text.startsWith("[turn ")) {
      for (const turn of turnsCovered(text)) present.add(turn);
    }
  }
  const missing: number[] = [];
  for (let turn = 1; turn <= upTo; turn++) if (!present.has(turn)) missing.push(turn);
  return missing;
}

export function statsOf(records: readonly RequestRecord[]): CorpusStats {
  const answered = records.filter((r) => r.status === 200);
  const agent = answered.filter((r) => r.kind === "agent");
  const summaries = answered.filter((r) => r.kind === "summary");
  const prompt = sum(agent.map((r) => r.reported_prompt_tokens));
  const cached = sum(agent.map((r) => r.cached_tokens));
  const summaryTokens = sum(summaries.map((r) => r.reported_prompt_tokens + r.completion_tokens));
  const agentAll = records.filter((r) => r.kind === "agent");
  const summaryAll = records.filter((r) => r.kind === "summary");
  const maxRequest = Math.max(0, ...agentAll.map((r) => r.prompt_tokens));
  return {
    agent_requests: agentAll.length,
    summary_calls: summaryAll.length,
    prompt_tokens: prompt,
    cached_tokens: cached,
    cached_share: prompt === 0 ? 0 : cached / prompt,
    summary_tokens: summaryTokens,
    cost_weighted_input: prompt - cached + 0.1 * cached + summaryTokens,
    max_request_tokens: maxRequest,
    max_request_share: Math.max(0, ...agentAll.map((r) => r.prompt_tokens / r.window)),
    max_summary_request_share: Math.max(0, ...summaryAll.map((r) => r.prompt_tokens / r.window)),
    over_window: records.filter((r) => r.over_window).length,
    failed: records.filter((r) => r.status !== 200).length,
    requests_missing_turns: agentAll.filter((r) => r.missing_turns.length > 0).length,
  };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
