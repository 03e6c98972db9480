/**
 * Hermes events as OpenTelemetry spans and metrics, with the GenAI semantic conventions: a session is an
 * `invoke_agent` span (a delegated task's under the `execute_tool delegate` span that started it, named by
 * its agent), each user prompt a `hermes.turn` span inside it, each model call a `chat MODEL` span,
 * each tool call an `execute_tool TOOL` span, each compaction pass a `hermes.compaction` span. Times come
 * from the events' `ts` (the injected clock), so spans can be ended late without lying about when.
 * Events are already redacted by the bus; prompt text, answers and tool arguments are left out unless
 * content capture is on.
 */
import {
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Meter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import type { HermesEvent } from "../core/events.ts";

export interface EventSpansOptions {
  captureContent: boolean;
  /** A one-shot run ends its session span at the `result` event (it follows `session.end`). */
  resultEndsSession: boolean;
}

interface SessionSpans {
  session: Span;
  context: Context;
  model: string;
  provider: string;
  turn?: { span: Span; context: Context } | undefined;
  call?: { span: Span; start: number } | undefined;
  tools: Map<string, Span>;
  compaction?: Span | undefined;
  ended?: { at: Date; status: string; reason: string } | undefined;
  /** A delegated task's session: no `result` event follows its end, so `session.end` ends its span. */
  delegated: boolean;
}

/** Where a delegated task's session span goes: under the delegate call that started it. */
interface Delegated {
  agent: string;
  depth: number;
  context: Context;
}

export interface EventSpans {
  onEvent(event: HermesEvent): void;
  /** Ends whatever is still open (an interrupted run), at its last known time. */
  close(at: Date): void;
}

/** The metric instruments, one set per process however many buses feed them. */
export interface Instruments {
  tokens: Histogram;
  durations: Histogram;
  cost: Counter;
  toolDurations: Histogram;
  compactions: Counter;
}

export function instruments(meter: Meter): Instruments {
  return {
    tokens: meter.createHistogram("gen_ai.client.token.usage", {
      unit: "{token}",
      description: "Tokens per model call, by gen_ai.token.type (input, output)",
    }),
    durations: meter.createHistogram("gen_ai.client.operation.duration", {
      unit: "s",
      description: "Duration of a model call",
    }),
    cost: meter.createCounter("hermes.cost.usage", {
      unit: "USD",
      description: "What model calls cost, by the price table or model.pricing",
    }),
    toolDurations: meter.createHistogram("hermes.tool.duration", {
      unit: "s",
      description: "Duration of a tool call, by tool and status",
    }),
    compactions: meter.createCounter("hermes.compaction.count", {
      description: "Committed compaction passes, by kind",
    }),
  };
}

export function eventSpans(tracer: Tracer, metrics: Instruments, options: EventSpansOptions): EventSpans {
  const sessions = new Map<string, SessionSpans>();
  /** Tasks announced by `agent.start` whose session has not started yet, by their session id. */
  const delegated = new Map<string, Delegated>();
  const { tokens, durations, cost, toolDurations, compactions } = metrics;

  const content = (attributes: Attributes, key: string, value: unknown) => {
    if (options.captureContent) attributes[key] = typeof value === "string" ? value : JSON.stringify(value);
    return attributes;
  };
  const endSession = (id: string, s: SessionSpans, at: Date) => {
    endTurn(s, at);
    for (const span of s.tools.values()) span.end(at);
    s.compaction?.end(at);
    s.call?.span.end(at);
    if (s.ended) {
      s.session.setAttributes({
        "hermes.session.status": s.ended.status,
        "hermes.session.reason": s.ended.reason,
      });
    }
    s.session.end(at);
    sessions.delete(id);
  };
  const endTurn = (s: SessionSpans, at: Date) => {
    s.turn?.span.end(at);
    s.turn = undefined;
  };
  const parent = (s: SessionSpans) => s.turn?.context ?? s.context;

  const onEvent = (event: HermesEvent): void => {
    const at = new Date(event.ts);
    const id = event.session_id;
    if (event.type === "session.start") {
      const provider = event.provider;
      const attributes: Attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": event.job,
        "gen_ai.conversation.id": id,
        "gen_ai.request.model": event.model,
        "hermes.session.resumed": event.resumed,
      };
      attributes["gen_ai.provider.name"] = attributes["gen_ai.system"] = provider;
      // A delegated task is an `invoke_agent` span of its agent's name under the delegate call's span.
      const task = delegated.get(id);
      delegated.delete(id);
      if (task) {
        attributes["gen_ai.agent.name"] = task.agent;
        attributes["hermes.agent.depth"] = task.depth;
        attributes["hermes.job"] = event.job;
      }
      const name = task ? task.agent : event.job;
      const under = task?.context ?? ROOT_CONTEXT;
      const session = tracer.startSpan(`invoke_agent ${name}`, {
        kind: SpanKind.INTERNAL,
        startTime: at,
        attributes,
      }, under);
      sessions.set(id, {
        session,
        context: trace.setSpan(under, session),
        model: event.model,
        provider,
        tools: new Map(),
        delegated: task !== undefined,
      });
      return;
    }
    const s = sessions.get(id);
    if (!s) return;
    switch (event.type) {
      case "message":
        if (event.role !== "user") {
          if (s.call) s.call.span.setAttributes(content({}, "gen_ai.output.messages", event.content));
          return;
        }
        endTurn(s, at);
        {
          const span = tracer.startSpan("hermes.turn", {
            startTime: at,
            attributes: content(
              { "hermes.turn.source": event.source },
              "gen_ai.input.messages",
              event.content,
            ),
          }, s.context);
          s.turn = { span, context: trace.setSpan(s.context, span) };
        }
        return;
      case "turn.start": {
        const attributes: Attributes = {
          "gen_ai.operation.name": "chat",
          "gen_ai.request.model": s.model,
          "hermes.turn": event.turn,
        };
        attributes["gen_ai.provider.name"] = attributes["gen_ai.system"] = s.provider;
        s.call?.span.end(at);
        s.call = {
          span: tracer.startSpan(
            `chat ${s.model}`,
            { kind: SpanKind.CLIENT, startTime: at, attributes },
            parent(s),
          ),
          start: at.getTime(),
        };
        return;
      }
      case "provider.retry":
        s.call?.span.addEvent("hermes.provider.retry", {
          "hermes.retry.attempt": event.attempt,
          "hermes.retry.delay_ms": event.delay_ms,
          ...(event.status !== null ? { "http.response.status_code": event.status } : {}),
        }, at);
        return;
      case "turn.end": {
        const call = s.call;
        s.call = undefined;
        if (!call) return;
        const metric: Attributes = {
          "gen_ai.operation.name": "chat",
          "gen_ai.request.model": s.model,
          "gen_ai.provider.name": s.provider,
        };
        call.span.setAttribute("gen_ai.response.finish_reasons", [event.finish_reason]);
        if (event.usage) {
          call.span.setAttributes({
            "gen_ai.usage.input_tokens": event.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": event.usage.completion_tokens,
            "gen_ai.usage.cache_read.input_tokens": event.usage.cached_tokens,
            "gen_ai.usage.cache_creation.input_tokens": event.usage.cache_write_tokens,
            "gen_ai.usage.reasoning.output_tokens": event.usage.reasoning_tokens,
          });
          tokens.record(event.usage.prompt_tokens, { ...metric, "gen_ai.token.type": "input" });
          tokens.record(event.usage.completion_tokens, { ...metric, "gen_ai.token.type": "output" });
        }
        if (event.cost_usd !== null) {
          call.span.setAttribute("hermes.cost_usd", event.cost_usd);
          cost.add(event.cost_usd, metric);
        }
        durations.record(Math.max(0, at.getTime() - call.start) / 1000, metric);
        call.span.end(at);
        return;
      }
      case "tool.call": {
        const attributes: Attributes = {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": event.tool,
          "gen_ai.tool.call.id": event.tool_call_id,
        };
        if (event.server) attributes["hermes.mcp.server"] = event.server;
        s.tools.set(
          event.tool_call_id,
          tracer.startSpan(`execute_tool ${event.tool}`, {
            startTime: at,
            attributes: content(attributes, "gen_ai.tool.call.arguments", event.args),
          }, parent(s)),
        );
        return;
      }
      case "tool.result":
      case "tool.denied": {
        const span = s.tools.get(event.tool_call_id) ??
          tracer.startSpan(`execute_tool ${event.tool}`, {
            startTime: at,
            attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.tool },
          }, parent(s));
        s.tools.delete(event.tool_call_id);
        const status = event.type === "tool.denied" ? "denied" : event.status;
        span.setAttribute("hermes.tool.status", status);
        if (status !== "ok") {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: event.type === "tool.denied" ? event.reason : "the tool reported an error",
          });
        }
        if (event.type === "tool.result") {
          span.setAttributes(content({}, "gen_ai.tool.call.result", event.content));
          toolDurations.record(event.duration_ms / 1000, {
            "gen_ai.tool.name": event.tool,
            "hermes.tool.status": status,
          });
        }
        span.end(at);
        return;
      }
      case "compaction.start":
        s.compaction?.end(at);
        s.compaction = tracer.startSpan("hermes.compaction", {
          startTime: at,
          attributes: {
            "hermes.compaction.kind": event.kind,
            "hermes.compaction.reason": event.reason,
            "hermes.compaction.before_tokens": event.before_tokens,
          },
        }, parent(s));
        return;
      case "compaction":
      case "compaction.failed":
      case "compaction.blocked": {
        const span = s.compaction ?? tracer.startSpan("hermes.compaction", { startTime: at }, parent(s));
        s.compaction = undefined;
        if (event.type === "compaction") {
          span.setAttributes({
            "hermes.compaction.kind": event.kind,
            "hermes.compaction.reason": event.reason,
            "hermes.compaction.before_tokens": event.before_tokens,
            "hermes.compaction.after_tokens": event.after_tokens,
            "hermes.compaction.messages_removed": event.messages_removed,
          });
          compactions.add(1, { "hermes.compaction.kind": event.kind });
        } else if (event.type === "compaction.failed") {
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.error });
        } else {
          span.setAttributes({
            "hermes.compaction.blocked": event.reason,
            "hermes.compaction.fallback": event.fallback ?? false,
          });
        }
        span.end(at);
        return;
      }
      case "agent.start": {
        const call = s.tools.get(event.tool_call_id);
        delegated.set(event.child_session_id, {
          agent: event.agent,
          depth: event.depth,
          context: call ? trace.setSpan(parent(s), call) : parent(s),
        });
        return;
      }
      case "agent.end":
        // A task that never started a session (it could not start) leaves nothing to wait for.
        delegated.delete(event.child_session_id);
        return;
      case "session.end":
        s.ended = { at, status: event.status, reason: event.reason };
        if (event.status === "failed" || event.status === "limit" || event.status === "interrupted") {
          s.session.setStatus({ code: SpanStatusCode.ERROR, message: event.reason });
        }
        if (!options.resultEndsSession || s.delegated) endSession(id, s, at);
        return;
      case "result":
        s.session.setAttributes({
          "hermes.exit_code": event.exit_code,
          "hermes.terminal_reason": event.terminal_reason,
          "hermes.turns": event.turns,
          "gen_ai.usage.input_tokens": event.usage.prompt_tokens,
          "gen_ai.usage.output_tokens": event.usage.completion_tokens,
          "gen_ai.usage.cache_read.input_tokens": event.usage.cached_tokens,
          ...(event.cost_usd !== null ? { "hermes.cost_usd": event.cost_usd } : {}),
        });
        if (event.status !== "success") {
          s.session.setStatus({ code: SpanStatusCode.ERROR, message: event.error ?? event.terminal_reason });
        }
        endSession(id, s, s.ended?.at ?? at);
        return;
      default:
        return;
    }
  };
  return {
    onEvent,
    close(at) {
      for (const [id, s] of sessions) endSession(id, s, s.ended?.at ?? at);
    },
  };
}
