/**
 * The event vocabulary, one type per event, and the bus that stamps them: one stream per process, `seq`
 * increasing per session. Emitters give `type` and the fields; the bus adds `schema_version`, `session_id`,
 * `seq` and `ts`, so an unknown type, a missing field or an extra one fails type checking at the emit site.
 * The fields are defined once, in event_schema.ts, which also makes the published JSON Schemas. Adding a
 * field or an event type is fine; renaming or removing one, or changing its meaning, bumps SCHEMA_VERSION.
 */
import type { z } from "zod";
import type { Clock } from "./clock.ts";
import type { eventFields, runResultFields } from "./event_schema.ts";

/** The version of the event and result formats, on every event and result (`schema_version`). */
export const SCHEMA_VERSION = 1;

/** The fields of each event, by type (without the envelope); defined with their JSON Schema in event_schema.ts. */
export type EventFields = { [K in keyof typeof eventFields]: z.output<(typeof eventFields)[K]> };

/** The result object without `type`, `schema_version` and `session_id`. */
export type RunResultFields = z.output<typeof runResultFields>;

export type EventType = keyof EventFields;

/** What the bus adds to every event. */
export interface EventEnvelope {
  schema_version: typeof SCHEMA_VERSION;
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
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Adds a listener; returns a function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(sessionId: string, input: EventInput): HermesEvent {
    const seq = (this.#seq.get(sessionId) ?? 0) + 1;
    this.#seq.set(sessionId, seq);
    // Events arrive redacted: a session emits through its outlet (runtime/session/outlets.ts).
    const { type, ...fields } = input;
    // `type` and the envelope first, for readable NDJSON; the rest destructures out of the union, so the
    // compiler cannot see that the parts still form one event.
    const event = {
      type,
      schema_version: SCHEMA_VERSION,
      session_id: sessionId,
      seq,
      ts: new Date(this.#clock.now()).toISOString(),
      ...fields,
    } as HermesEvent;
    for (const listener of this.#listeners) listener(event);
    return event;
  }
}
