/**
 * A session's tape: what sits between the session and its model and tools when a run is recorded
 * (`--record`, job key `record:`) or replayed (`hermes replay`, `hermes test` with a cassette). The session
 * asks it for its provider — a replay never builds the job's, so no client exists and no connection is
 * tried — and hands it every tool execution at the tool gate.
 */
import { RunError } from "../core/errors.ts";
import { type Redactor, redactValue } from "../core/redact.ts";
import { VERSION } from "../core/version.ts";
import type { ResolvedJob } from "../config/job.ts";
import {
  type CompleteOptions,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  ProviderError,
} from "../providers/provider.ts";
import type { ExecutedCall, ExecuteTool } from "../tools/gate.ts";
import type { ToolOutcome } from "../tools/tool.ts";
import {
  type Cassette,
  CASSETTE_VERSION,
  type Exchange,
  jobHash,
  type ModelExchange,
  stableJson,
  type ToolExchange,
} from "./cassette.ts";
import { firstDifference, normaliseRequest } from "./normalise.ts";

export interface Tape {
  /** The session's provider; `build` makes the job's own, and a replay never calls it. */
  provider(build: () => Promise<Provider>): Promise<Provider>;
  executeTool: ExecuteTool;
  /** The session ended (or gave up): a recording writes its cassette. */
  close(outcome: { status: string; terminal_reason: string } | null): Promise<void>;
}

/** How a replay serves tool calls: from the cassette (nothing runs), or by running them and comparing. */
export type ReplayTools = "recorded" | "live";

/** A replayed run asked something the cassette did not record: `terminal_reason: replay_diverged`, exit 1. */
export class ReplayDiverged extends RunError {
  constructor(message: string) {
    super(`replay diverged: ${message}`, { reason: "replay_diverged" });
    this.name = "ReplayDiverged";
  }
}

/** Records every exchange of the session into a cassette, handed to `write` as text when the session ends. */
export function recordingTape(
  write: (text: string) => Promise<void>,
  options: { job: ResolvedJob; redact: Redactor },
): Tape {
  const exchanges: Exchange[] = [];
  const { job, redact } = options;
  return {
    provider: async (build) => recordingProvider(await build(), exchanges),
    executeTool: async (call, run) => {
      const started = performance.now();
      const outcome = await run();
      exchanges.push({
        type: "tool",
        ...toolFields(call),
        result: { status: outcome.status, content: outcome.content },
        duration_ms: Math.round(performance.now() - started),
      });
      return outcome;
    },
    async close(outcome) {
      const cassette: Cassette = {
        cassette_version: CASSETTE_VERSION,
        hermes_version: VERSION,
        job: {
          name: job.spec.name,
          hash: await jobHash(job.spec, job.inputs),
          path: job.path,
          dir: job.dir,
          inputs: job.inputs,
          spec: job.spec,
        },
        outcome,
        exchanges,
      };
      // Secrets replaced on values, like everything else the session puts out (core/redact.ts).
      await write(JSON.stringify(redactValue(cassette, redact), null, 2) + "\n");
    },
  };
}

function recordingProvider(inner: Provider, exchanges: Exchange[]): Provider {
  return {
    name: inner.name,
    ...(inner.serverWindow ? { serverWindow: inner.serverWindow.bind(inner) } : {}),
    ...(inner.close ? { close: inner.close.bind(inner) } : {}),
    async complete(request: ModelRequest, options: CompleteOptions = {}): Promise<ModelResponse> {
      const started = performance.now();
      const stream: string[] = [];
      const entry: ModelExchange = { type: "model", request: normaliseRequest(request), duration_ms: 0 };
      // Kept in call order: a summary call that starts while another waits is its own entry.
      exchanges.push(entry);
      try {
        const response = await inner.complete(request, {
          ...options,
          onDelta: (text) => {
            stream.push(text);
            options.onDelta?.(text);
          },
        });
        entry.response = {
          message: response.message,
          usage: response.usage,
          finish_reason: response.finish_reason,
          ...(stream.length ? { stream } : {}),
        };
        return response;
      } catch (error) {
        if (!(error instanceof ProviderError)) {
          exchanges.splice(exchanges.indexOf(entry), 1);
          throw error;
        }
        entry.error = { message: error.message, status: error.status, reason: error.reason };
        throw error;
      } finally {
        entry.duration_ms = Math.round(performance.now() - started);
      }
    },
  };
}

/**
 * Serves the session's model answers from `cassette`, each only for the request it was recorded for, and its
 * tool results too (`recorded`) or runs the tools and checks their results (`live`). The job's provider is
 * never built.
 */
export function replayTape(cassette: Cassette, options: { tools: ReplayTools; redact: Redactor }): Tape {
  const models = cassette.exchanges.filter((e): e is ModelExchange => e.type === "model");
  const tools = cassette.exchanges.filter((e): e is ToolExchange => e.type === "tool");
  let nextModel = 0;
  let nextTool = 0;
  // The first divergence stands: a caller that copes with a failed call (a compaction summary falls back
  // without the model) must not carry the run past it, so every later call fails with the same words.
  let diverged: ReplayDiverged | undefined;
  const diverge = (message: string): never => {
    diverged = new ReplayDiverged(message);
    throw diverged;
  };
  const provider: Provider = {
    name: "replay",
    // deno-lint-ignore require-await
    async complete(request: ModelRequest, callOptions: CompleteOptions = {}): Promise<ModelResponse> {
      if (diverged) throw diverged;
      const index = nextModel++;
      const recorded = models[index];
      if (!recorded) {
        return diverge(
          `model call ${
            index + 1
          }: the cassette has only ${models.length} model call(s), and the run asked ` +
            "for another",
        );
      }
      // Compared as recorded: normalised, secrets replaced.
      const now = redactValue(normaliseRequest(request), options.redact);
      const difference = firstDifference(recorded.request, now);
      if (difference !== null) diverge(`model call ${index + 1}: ${difference}`);
      callOptions.signal?.throwIfAborted();
      if (!recorded.response) {
        const error = recorded.error ?? { message: "no response recorded", status: null, reason: "" };
        throw new ProviderError(error.message, {
          status: error.status,
          kind: error.reason === "rate_limited" ? "rate_limit" : "fatal",
        });
      }
      const { message, usage, finish_reason, stream } = recorded.response;
      callOptions.onProgress?.();
      for (const chunk of stream ?? []) callOptions.onDelta?.(chunk);
      const chars = message.content.length +
        (message.tool_calls ?? []).reduce((n, c) => n + c.name.length + c.arguments.length, 0);
      if (chars) callOptions.onOutput?.(chars);
      return { message: structuredClone(message), usage, finish_reason };
    },
  };
  return {
    provider: () => Promise.resolve(provider),
    executeTool: async (call, run) => {
      if (diverged) throw diverged;
      const index = nextTool++;
      const recorded = tools[index];
      const now = redactValue(toolFields(call), options.redact);
      if (!recorded) {
        return diverge(
          `tool call ${index + 1} (${call.tool}): the cassette has only ${tools.length} tool execution(s)`,
        );
      }
      for (const field of ["tool", "args"] as const) {
        if (stableJson(recorded[field]) !== stableJson(now[field])) {
          diverge(
            `tool call ${index + 1} (${call.tool}) ${field}: recorded ${stableJson(recorded[field])}, now ` +
              stableJson(now[field]),
          );
        }
      }
      if (options.tools === "recorded") return { ...recorded.result };
      const outcome: ToolOutcome = await run();
      const result = redactValue({ status: outcome.status, content: outcome.content }, options.redact);
      for (const field of ["status", "content"] as const) {
        if (recorded.result[field] !== result[field]) {
          diverge(
            `tool call ${index + 1} (${call.tool}) result ${field}: recorded ${
              JSON.stringify(clip(recorded.result[field]))
            }, now ${JSON.stringify(clip(result[field]))}`,
          );
        }
      }
      return outcome;
    },
    close: () => Promise.resolve(),
  };
}

function toolFields(call: ExecutedCall): Pick<ToolExchange, "tool" | "tool_call_id" | "server" | "args"> {
  return {
    tool: call.tool,
    tool_call_id: call.tool_call_id,
    ...(call.server !== undefined ? { server: call.server } : {}),
    args: call.args,
  };
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
