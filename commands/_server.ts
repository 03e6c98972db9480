/** What the stdio servers (`hermes rpc`, `hermes acp`) share: store, events, config and global hooks. */
import type { Cli } from "./_cli.ts";
import { globalHooks } from "./sessions/_hooks.ts";
import type { Clock } from "../runtime/clock.ts";
import { ExitCode } from "../runtime/errors.ts";
import { EventBus } from "../runtime/events.ts";
import type { Hooks } from "../runtime/hooks.ts";
import { loadUserConfig } from "../runtime/job.ts";
import type { UserConfig } from "../runtime/job_schema.ts";
import type { Logger } from "../runtime/log.ts";
import type { Store } from "../runtime/store.ts";
import { VERSION } from "../runtime/version.ts";

export interface ServerContext {
  store: Store;
  events: EventBus;
  clock: Clock;
  log: Logger;
  redact: (text: string) => string;
  env: Record<string, string>;
  config: UserConfig | undefined;
  version: string;
  hooks: Hooks;
  signal: AbortSignal;
}

/** Runs a server with its context, then stops the global plugins and closes the store; maps signals to exit codes. */
export async function serveWith(
  cli: Cli,
  serve: (context: ServerContext) => Promise<unknown>,
): Promise<number> {
  const config = loadUserConfig(`${cli.home}/config.yaml`);
  const store = cli.openStore();
  try {
    const scope = await globalHooks(cli, store);
    try {
      await serve({
        store,
        events: new EventBus(cli.clock),
        clock: cli.clock,
        log: cli.log,
        redact: cli.redact,
        env: cli.env,
        config,
        version: VERSION,
        hooks: scope.hooks,
        signal: cli.signal,
      });
    } finally {
      await scope.close();
    }
  } finally {
    store.close();
  }
  const signal = cli.signalName();
  return signal === null
    ? ExitCode.success
    : signal === "SIGTERM"
    ? ExitCode.terminated
    : ExitCode.interrupted;
}
