/** The collaborators a long-lived stdio server (`hermes rpc`, `hermes acp`) is built from. */
import type { Clock } from "../core/clock.ts";
import type { EventBus } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { UserConfig } from "../config/job_schema.ts";
import type { Logger } from "../core/log.ts";
import type { Redactor } from "../core/redact.ts";
import type { Store } from "../store/store.ts";

export interface ServerContext {
  store: Store;
  events: EventBus;
  clock: Clock;
  log: Logger;
  redact: Redactor;
  env: Record<string, string>;
  /** This host's name in session owners and leases (the CLI's `hostName`). */
  host: string;
  config: UserConfig | undefined;
  version: string;
  /** The global plugins' hooks (for delete/archive). */
  hooks?: Hooks;
  /** SIGINT/SIGTERM: interrupts running turns and stops serving. */
  signal?: AbortSignal;
}
