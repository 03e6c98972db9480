/**
 * What the application core is built from: the process's collaborators, shared by every front-end (`hermes
 * run`, `hermes rpc`, `hermes acp`, the daemon). Plain values and leaf services only, so a new front-end
 * (HTTP, say) fills one in and calls the operations in app.ts.
 */
import type { Clock } from "../core/clock.ts";
import type { EventBus } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import type { UserConfig } from "../config/job_schema.ts";
import type { Logger } from "../core/log.ts";
import type { InputSource } from "../core/types.ts";
import type { QueuedRun, Store } from "../store/store.ts";
import type { ProviderRegistry } from "../providers/registry.ts";

export interface AppContext {
  store: Store;
  /** The events of every session this app opens or runs (a run may bring its own bus). */
  events: EventBus;
  clock: Clock;
  log: Logger;
  /** The process environment snapshot. */
  env: Record<string, string>;
  /** This host's name in session owners and leases (the CLI's `hostName`). */
  host: string;
  /** HERMES_HOME/config.yaml, already loaded (under the trust policy in force). */
  config: UserConfig | undefined;
  /** Relative job paths and job-less sessions resolve against this directory. */
  cwd: string;
  /** The front-end, as inputs' `source` (`cli`, `rpc`, `acp`, `job`). */
  source: InputSource;
  /** The global plugins' hooks (`on_session_delete` on delete and archive). */
  hooks?: Hooks;
  /** HERMES_HOME: runs' own worktrees are made in its `worktrees` folder (docs/workspaces.md). */
  home?: string;
  /** SIGINT/SIGTERM: interrupts running turns. */
  signal?: AbortSignal;
  /**
   * Told of each run `submit` newly queued (not a deduplicated one), so a queue worker in this process can
   * start it at once instead of at its next look at the store (the look stays for runs queued elsewhere).
   */
  onSubmitted?: (run: QueuedRun) => void;
  /**
   * The model providers jobs may name, each with its own `model` keys (default: the built-in registry,
   * runtime/providers/registry.ts): job files are checked against it and sessions built from it.
   */
  providers?: ProviderRegistry;
}
