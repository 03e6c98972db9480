/** `hermes acp`: an Agent Client Protocol agent over stdin/stdout (runtime/acp/agent.ts). */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { globalHooks, type HookScope } from "./sessions/_hooks.ts";
import { VERSION } from "../runtime/version.ts";
import { serveAcp } from "../runtime/acp/agent.ts";
import { ExitCode, ValidationError } from "../runtime/errors.ts";
import { EventBus } from "../runtime/events.ts";
import { loadUserConfig } from "../runtime/job.ts";

export async function main(cli: Cli): Promise<number> {
  const { positionals } = parseCommandArgs("acp", cli.args, {});
  if (positionals.length > 0) {
    throw new ValidationError(`hermes acp: unexpected argument "${positionals[0]}"`);
  }
  const config = loadUserConfig(`${cli.home}/config.yaml`);
  const store = cli.openStore();
  let scope: HookScope | undefined;
  try {
    scope = await globalHooks(cli, store);
    await serveAcp({
      input: cli.stdin,
      output: Deno.stdout.writable,
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
    const signal = cli.signalName();
    return signal === null
      ? ExitCode.success
      : signal === "SIGTERM"
      ? ExitCode.terminated
      : ExitCode.interrupted;
  } finally {
    await scope?.close();
    store.close();
  }
}
