/** The App (runtime/app/) as a CLI command builds it: the CLI's clock, environment, host and signal. */
import type { Cli } from "./_cli.ts";
// app.ts, not the App's face (mod.ts): a run does not load the vocabulary of searches, exports and tokens.
import { App } from "../runtime/app/app.ts";
import type { AppContext } from "../runtime/app/context.ts";
import { EventBus } from "../runtime/core/events.ts";
import type { Store } from "../runtime/store/store.ts";

export function cliApp(
  cli: Cli,
  store: Store,
  options: Partial<
    Pick<AppContext, "events" | "log" | "config" | "hooks" | "signal" | "source" | "onSubmitted">
  > = {},
): App {
  return new App({
    store,
    events: options.events ?? new EventBus(cli.clock),
    clock: cli.clock,
    log: options.log ?? cli.log,
    env: cli.env,
    host: cli.host,
    config: options.config,
    cwd: Deno.cwd(),
    home: cli.home,
    source: options.source ?? "cli",
    signal: options.signal ?? cli.signal,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.onSubmitted ? { onSubmitted: options.onSubmitted } : {}),
  });
}
