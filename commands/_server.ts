/** What the stdio servers (`hermes rpc`, `hermes acp`) share: store, events, config and global hooks. */
import type { Cli } from "./_cli.ts";
import { globalHooks } from "./sessions/_hooks.ts";
import { ExitCode } from "../runtime/core/errors.ts";
import { EventBus } from "../runtime/core/events.ts";
import { loadUserConfig } from "../runtime/config/job_file.ts";
import { VERSION } from "../runtime/core/version.ts";
import type { AppContext } from "../runtime/app/mod.ts";
import { startTelemetry, telemetrySettings } from "../runtime/telemetry/mod.ts";

/** Runs a server with its context, then stops the global plugins and closes the store; maps signals to exit codes. */
export async function serveWith(
  cli: Cli,
  serve: (context: Omit<AppContext, "source"> & { version: string }) => Promise<unknown>,
): Promise<number> {
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  const telemetry = await startTelemetry(telemetrySettings(cli.env, config?.telemetry), {
    version: VERSION,
    warn: (message) => cli.log.warn(message),
  });
  const events = new EventBus(cli.clock);
  telemetry?.attach(events, { resultEndsSession: false });
  const store = await cli.openStore();
  try {
    const scope = await globalHooks(cli, store);
    try {
      await serve({
        store,
        events,
        clock: cli.clock,
        log: cli.log,
        env: cli.env,
        host: cli.host,
        config,
        cwd: Deno.cwd(),
        version: VERSION,
        hooks: scope.hooks,
        signal: cli.signal,
      });
    } finally {
      await scope.close();
    }
  } finally {
    await telemetry?.shutdown(new Date(cli.clock.now()));
    await store.close();
  }
  const signal = cli.signalName();
  return signal === null
    ? ExitCode.success
    : signal === "SIGTERM"
    ? ExitCode.terminated
    : ExitCode.interrupted;
}
