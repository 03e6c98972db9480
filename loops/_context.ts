/** What the loop and heartbeat commands and the driver share inside one `Recurring`. */
import type { Clock } from "../runtime/core/clock.ts";
import type { EventBus } from "../runtime/core/events.ts";
import type { Hooks } from "../runtime/core/hooks.ts";
import type { Logger } from "../runtime/core/log.ts";
import type { SessionStore } from "../runtime/store/store.ts";
import type { RecurringSettings } from "./recurring_config.ts";

/** Asks the model a short question outside the transcript and returns its answer. */
export type Judge = (question: string, signal?: AbortSignal) => Promise<string>;

export interface RecurringContext {
  store: SessionStore;
  clock: Clock;
  events: EventBus;
  hooks: Hooks;
  log: Logger;
  settings: RecurringSettings;
  judge?: Judge;
  /** Recurring turns (ticks, beats) running in this process, per session. */
  running: Map<string, number>;
  /** Wakes a driver sleeping on this session, because its state changed. */
  wake(sessionId: string): void;
  newId(): string;
}
