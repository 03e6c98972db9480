/**
 * `hermes acp`: an Agent Client Protocol agent over newline-delimited JSON-RPC (npm:@agentclientprotocol/sdk).
 *
 * - `initialize`: protocol 1; capabilities `loadSession: true`, text prompts only (no image, audio, embedded
 *   context); MCP servers over stdio and Streamable HTTP (`mcpCapabilities.http`), not SSE.
 * - `session/new {cwd, _meta?: {hermes?: {job?, inputs?, model?, system?}}}`: a job file (relative to `cwd`)
 *   or, without one, config.yaml's defaults with `cwd` as the job directory.
 * - `session/load`: opens a stored session and replays its transcript as `session/update`s before answering.
 * - `session/prompt`: streams `agent_message_chunk`, `tool_call`, `tool_call_update`; a slash command's output
 *   is sent as a message chunk. Stop reasons: `end_turn`; `cancelled` after `session/cancel`;
 *   `max_turn_requests` / `max_tokens` for limits; `refusal` when the model's answer was filtered. A failed
 *   turn (provider error, timeout) is a JSON-RPC error -32005 with the result object in `data.result`. Every
 *   PromptResponse carries the result object (docs/result.md) in `_meta.hermes.result`.
 * - A tool call outside the job's allow-lists: `session/request_permission` (allow once / reject).
 * - Slash commands (`/status`, `/compress`, `/loop`, …) are announced with `available_commands_update`.
 */
import * as acp from "@agentclientprotocol/sdk";
import { z } from "zod";
import { errorMessage } from "../core/errors.ts";
import { parseSlash } from "../agent/slash.ts";
import {
  App,
  type AppContext,
  NotFoundError,
  type OpenSession,
  StoreUnavailableError,
  type TurnOutcome,
  ValidationError,
} from "../app/mod.ts";
import { mcpServersOf } from "./mcp_servers.ts";
import type { ToolAsker } from "../tools/gate.ts";
import { promptText, stopReasonOf } from "./prompt.ts";
import { commandsUpdate, eventUpdate, historyUpdates, toolKind, toolTitle } from "./updates.ts";

export interface ServeAcpOptions extends Omit<AppContext, "source"> {
  input: ReadableStream<Uint8Array>;
  output: WritableStream<Uint8Array>;
  version: string;
}

const ALLOW_ONCE = "allow_once";
const REJECT_ONCE = "reject_once";
const RUN_FAILED = -32005;
const STORE_UNAVAILABLE = -32007;

const HermesMeta = z.strictObject({
  job: z.string().min(1).optional(),
  inputs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  model: z.string().min(1).optional(),
  system: z.string().optional(),
});

/** Per-session streaming state of this connection. */
interface Stream {
  /** The current assistant message was sent as deltas already. */
  streamed: boolean;
  /** The tool call now running (tool calls of one session run one at a time). */
  toolCallId: string | undefined;
}

/** Serves one ACP client until its connection closes. The App's domain errors become ACP errors in `rethrowAsRequestError`. */
export async function serveAcp(options: ServeAcpOptions): Promise<void> {
  const { log } = options;
  const streams = new Map<string, Stream>();
  let client: acp.AgentContext | undefined;
  const send = (sessionId: string, update: acp.SessionUpdate): Promise<void> => {
    if (!client) return Promise.resolve();
    return client.notify(acp.methods.client.session.update, {
      sessionId,
      update,
    }).catch((error) => log.debug(`acp: cannot send an update: ${errorMessage(error)}`));
  };

  // A tool call outside the job's allow-lists is put to the editor (the session's gate asks).
  const ask: ToolAsker = async (request) => {
    if (!client) return null;
    const stream = streams.get(request.session_id);
    const response = await client.request(acp.methods.client.session.requestPermission, {
      sessionId: request.session_id,
      toolCall: {
        toolCallId: stream?.toolCallId ?? request.tool_call_id,
        title: toolTitle(request.tool, request.args, request.subject),
        kind: toolKind(request.tool),
        status: "pending",
        rawInput: request.args,
      },
      options: [
        { optionId: ALLOW_ONCE, name: "Allow once", kind: "allow_once" },
        { optionId: REJECT_ONCE, name: "Reject", kind: "reject_once" },
      ],
      _meta: {
        hermes: {
          reason: request.reason,
          rule: request.rule,
          ...(request.subject !== undefined ? { subject: request.subject } : {}),
        },
      },
    }, { cancellationSignal: request.signal, stopWaitingOnCancel: true });
    return response.outcome.outcome === "selected" && response.outcome.optionId === ALLOW_ONCE;
  };

  const interrupt = new AbortController();
  const { input: _input, output: _output, version: _version, ...context } = options;
  const app = new App({ ...context, source: "acp", signal: interrupt.signal }, {
    onDelta: (sessionId, text) => {
      const stream = streams.get(sessionId);
      if (!stream || text === "") return;
      stream.streamed = true;
      void send(sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    },
    asker: { ask, name: "the editor" },
  });

  const unsubscribe = options.events.subscribe((event) => {
    const stream = streams.get(event.session_id);
    if (!stream) return;
    if (event.type === "tool.call") stream.toolCallId = event.tool_call_id;
    const update = eventUpdate(event, stream.streamed);
    if (event.type === "message" && event.role === "assistant") stream.streamed = false;
    if (update) void send(event.session_id, update);
  });

  /** Sessions of this connection only: opened or loaded by it. */
  const known = (sessionId: string): string => {
    if (!streams.has(sessionId) || !app.find(sessionId)) throw acp.RequestError.sessionNotFound(sessionId);
    return sessionId;
  };
  const announceCommands = (open: OpenSession) => {
    // After the response: a client routes updates only for sessions it knows.
    setTimeout(() => void send(open.id, commandsUpdate(open.commands())), 0);
  };
  // A loaded session runs with the servers its job had; the editor's list applies to new sessions.
  const warnMcp = (servers: readonly unknown[]) => {
    if (servers.length > 0) {
      log.warn(`acp: session/load keeps the stored job's MCP servers; ignoring ${servers.length} given`);
    }
  };

  const agent = acp.agent({ name: "hermes" })
    .onConnect((connection) => {
      client = connection.client;
    })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        mcpCapabilities: { http: true, sse: false },
      },
      agentInfo: { name: "hermes", title: "Hermes", version: options.version },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      const mcp_servers = mcpServersOf(params.mcpServers ?? [], log);
      const meta = HermesMeta.safeParse(
        (params._meta as { hermes?: unknown } | null | undefined)?.hermes ?? {},
      );
      if (!meta.success) {
        const issue = meta.error.issues[0]!;
        const keys = issue.code === "unrecognized_keys" ? [issue.keys[0]!] : [];
        const path = ["_meta", "hermes", ...issue.path.map(String), ...keys].join(".");
        throw acp.RequestError.invalidParams({ path }, `${path}: ${issue.message}`);
      }
      const { job, inputs, model, system } = meta.data;
      const open = await app.open({
        cwd: params.cwd,
        ...(job !== undefined ? { job } : {}),
        ...(inputs ? { inputs } : {}),
        ...(model !== undefined ? { model } : {}),
        ...(system !== undefined ? { system } : {}),
        mcp_servers,
      }).catch(rethrowAsRequestError);
      streams.set(open.id, { streamed: false, toolCallId: undefined });
      announceCommands(open);
      return { sessionId: open.id };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params }) => {
      warnMcp(params.mcpServers);
      const open = await app.load(params.sessionId).catch((error) => {
        if (error instanceof NotFoundError) throw acp.RequestError.sessionNotFound(params.sessionId);
        return rethrowAsRequestError(error);
      });
      let replayed = Promise.resolve();
      for (const update of historyUpdates(await app.history(open.id))) {
        replayed = send(open.id, update);
      }
      await replayed;
      streams.set(open.id, { streamed: false, toolCallId: undefined });
      announceCommands(open);
      return {};
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
      const id = known(params.sessionId);
      const text = promptText(params.prompt);
      let outcome: TurnOutcome;
      try {
        outcome = await app.prompt(id, text);
      } catch (error) {
        return rethrowAsRequestError(error);
      }
      const { result } = outcome;
      if (parseSlash(text) && outcome.result.final) {
        await send(id, {
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: outcome.result.final },
        });
      }
      const stopReason = stopReasonOf(outcome);
      if (stopReason === null) {
        throw new acp.RequestError(RUN_FAILED, outcome.result.error ?? "The turn failed", { result });
      }
      return { stopReason, _meta: { hermes: { result } } };
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      if (streams.has(params.sessionId) && app.find(params.sessionId)) {
        app.cancel(params.sessionId).catch((error) => log.warn(`acp: cancel: ${errorMessage(error)}`));
      }
    });

  const connection = agent.connect(acp.ndJsonStream(options.output, options.input));
  const onSignal = () => {
    interrupt.abort(options.signal?.reason);
    connection.close();
  };
  if (options.signal?.aborted) onSignal();
  options.signal?.addEventListener("abort", onSignal, { once: true });
  try {
    await connection.closed;
  } finally {
    options.signal?.removeEventListener("abort", onSignal);
    interrupt.abort(new DOMException("the client disconnected", "AbortError"));
    await app.close();
    unsubscribe();
  }
}

function rethrowAsRequestError(error: unknown): never {
  if (error instanceof acp.RequestError) throw error;
  if (error instanceof ValidationError) throw acp.RequestError.invalidParams(undefined, error.message);
  // The same application code as `hermes rpc`: the store stayed unavailable past store.retry.
  if (error instanceof StoreUnavailableError) throw new acp.RequestError(STORE_UNAVAILABLE, error.message);
  throw new acp.RequestError(RUN_FAILED, errorMessage(error));
}
