/** The §7 event vocabulary: one stream per process, `seq` increasing per session. */
import type { Clock } from "./clock.ts";
import type { HermesEvent } from "./types.ts";

export type EventInput = { type: string } & Record<string, unknown>;
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
    const { type, ...fields } = input;
    const event: HermesEvent = {
      type,
      session_id: sessionId,
      seq,
      ts: new Date(this.#clock.now()).toISOString(),
      ...fields,
    };
    for (const listener of this.#listeners) listener(event);
    return event;
  }
}
