/**
 * The event vocabulary (docs/events.md), one type per event, and the bus that stamps them: one stream per process,
 * `seq` increasing per session. Emitters give `type` and the fields; the bus adds `session_id`, `seq`
 * and `ts`, so an unknown type, a missing field or an extra one fails type checking at the emit site.
 * Adding a field is fine; renaming or removing one is a contract change.
 */
import type { Clock } from "./clock.ts";
import { type Redactor, redactorOf, redactValue, type Secrets } from "./redact.ts";
import type { SessionStatus, ToolCall, Usage } from "./types.ts";

/** The fields of each event, by type (without the envelope). */
export interface EventFields {
  "session.start": { job: string; model: string; resumed: boolean };
  "turn.start": { turn: number; injected?: string[] };
  message:
    | { role: "user"; content: string; source: "cli" | "rpc" | "acp" | "job" }
    | { role: "assistant"; content: string; tool_calls?: ToolCall[] };
  /** `server`: the MCP server of an `mcp__SERVER__TOOL` call. */
  "tool.call": { tool: string; tool_call_id: string; args: Record<string, unknown>; server?: string };
  "tool.result": {
    tool: string;
    tool_call_id: string;
    status: "ok" | "error" | "denied";
    content: string;
    duration_ms: number;
    server?: string;
  };
  "tool.denied": { tool: string; tool_call_id: string; reason: string; server?: string };
  /** A progress notification of a running MCP tool call. */
  "tool.progress": {
    tool: string;
    tool_call_id: string;
    server: string;
    progress: number;
    total: number | null;
    message: string | null;
  };
  /** An MCP server that failed to start (not `required`: the run goes on without its tools). */
  "mcp.error": { server: string; error: string };
  /** A committed compaction pass. */
  compaction: {
    kind: string;
    reason: string;
    before_tokens: number;
    after_tokens: number;
    messages_removed: number;
    compaction_id: number;
    /** after_tokens ÷ the compaction threshold: how much headroom the session has left. */
    occupancy: number;
  };
  /** A compaction pass took the lease and starts working (a summary call may follow). */
  "compaction.start": { reason: string; kind: string; before_tokens: number };
  /**
   * Automatic compaction was wanted but did not happen: the breaker is open, summary calls are cooling down,
   * or the result would not have been smaller (`refused_growth`). `trigger` is the pass's reason.
   */
  "compaction.blocked": {
    /**
     * `summary_failed`, `not_a_summary` and `infeasible` come with the fallback (a summary failed, was no
     * summary, or was not worth a call).
     */
    reason: "breaker" | "cooldown" | "refused_growth" | "summary_failed" | "not_a_summary" | "infeasible";
    kind: string;
    trigger: string;
    before_tokens: number;
    /** When automatic compaction may run again (breaker, cooldown). */
    until: string | null;
    /**
     * The deterministic fallback ran instead: the middle was dropped behind one marker (archived, still
     * searchable), so the request fits the window all the same.
     */
    fallback?: boolean;
  };
  /** A compaction pass that failed (its summary call, typically); the transcript is unchanged. */
  "compaction.failed": { reason: string; error: string };
  /** A slash command's output (every command run: a job step, `-p`, RPC, ACP, a loop tick). */
  command: { name: string; output: string };
  /** An interval below its floor was raised to it (`/loop 5s …` under `loops.min_interval`). */
  "interval.raised": { command: string; setting: string; requested_ms: number; interval_ms: number };
  /** Something of the session runs without the OS sandbox (an explicit `sandbox: off`), and which. */
  sandbox: { mode: "off"; reason: string };
  "loop.tick": { tick: number; prompt: string; interval_ms: number | null; times: number | null };
  "loop.end": { reason: string | null; status: "paused" | "done"; ticks: number };
  "heartbeat.tick": { tick: number; prompt: string; interval_ms: number };
  "plugin.error": { plugin: string; hook: string | null; error: string };
  "provider.retry": { attempt: number; delay_ms: number; status: number | null; error: string };
  /**
   * A store operation met a transient fault (the database restarting, a lost connection, a lock held past
   * its timeout) and is tried again after `delay_ms`; `elapsed_ms` of the `budget_ms` (store.retry) used.
   */
  "store.retry": {
    operation: string;
    attempt: number;
    delay_ms: number;
    elapsed_ms: number;
    budget_ms: number;
    error: string;
  };
  /**
   * `cost_usd`: what this model call cost by the price table or `model.pricing`; null when the model has
   * no known price or the provider reported no usage.
   */
  "turn.end": { turn: number; usage: Required<Usage> | null; cost_usd: number | null; finish_reason: string };
  "session.end": { status: SessionStatus; reason: string };
  /** The result object; the last event of a run. */
  result: RunResultFields;
}

/** The result without `type` and `session_id`. */
export interface RunResultFields {
  status: "success" | "failed" | "limit" | "interrupted";
  exit_code: number;
  job: string;
  final: string;
  output: unknown;
  turns: number;
  /**
   * Summed over the model calls of this work; `cached_tokens` (cache reads) and `cache_write_tokens` are part
   * of `prompt_tokens`, `reasoning_tokens` part of `completion_tokens` (each 0 when the provider reported none).
   */
  usage: Required<Usage>;
  /** What the work's model calls cost (USD); null when any of them was of a model without a known price. */
  cost_usd: number | null;
  duration_ms: number;
  compactions: number;
  terminal_reason: string;
  error: string | null;
  /** Present only when the shell tool, a plugin or an MCP server ran without the OS sandbox (`sandbox: off`). */
  sandbox?: "off";
}

export type EventType = keyof EventFields;

/** What the bus adds to every event. */
export interface EventEnvelope {
  session_id: string;
  seq: number;
  ts: string;
}

/** One object type per union member (readable in editors, comparable in type tests). */
type Flat<T> = T extends unknown ? { [K in keyof T]: T[K] } : never;

/** What an emitter gives for events of type `T` (a union of them when `T` is a union). */
export type EventInput<T extends EventType = EventType> = T extends EventType
  ? Flat<{ type: T } & EventFields[T]>
  : never;

/** An event as listeners see it; switch on `type` to narrow. */
export type HermesEvent<T extends EventType = EventType> = T extends EventType
  ? Flat<{ type: T } & EventEnvelope & EventFields[T]>
  : never;

export type EventListener = (event: HermesEvent) => void;

export class EventBus {
  #clock: Clock;
  #seq = new Map<string, number>();
  #listeners = new Set<EventListener>();
  /**
   * Every secret any session of this process registered: an event is redacted before a listener sees it
   * (stdout, RPC, ACP, progress). One set for the bus, not one per session: more redaction is always safe,
   * and the set stays bounded by the distinct secret values, however many sessions a server opens.
   */
  #secrets: Secrets = new Map();
  #redact: Redactor = (text) => text;
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Adds secret values to replace in every event from now on (a session's, at its open). */
  addSecrets(secrets: Secrets): void {
    const before = this.#secrets.size;
    for (const [value, name] of secrets) if (!this.#secrets.has(value)) this.#secrets.set(value, name);
    if (this.#secrets.size !== before) this.#redact = redactorOf(this.#secrets);
  }

  /** Adds a listener; returns a function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(sessionId: string, input: EventInput): HermesEvent {
    const seq = (this.#seq.get(sessionId) ?? 0) + 1;
    this.#seq.set(sessionId, seq);
    const { type, ...fields } = this.#secrets.size ? redactValue(input, this.#redact) : input;
    // `type` and the envelope first, for readable NDJSON; the rest destructures out of the union, so the
    // compiler cannot see that the parts still form one event.
    const event = {
      type,
      session_id: sessionId,
      seq,
      ts: new Date(this.#clock.now()).toISOString(),
      ...fields,
    } as HermesEvent;
    for (const listener of this.#listeners) listener(event);
    return event;
  }
}
