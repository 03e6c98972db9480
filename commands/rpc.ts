/** `hermes rpc [--max-line SIZE]`: JSON-RPC 2.0 over stdin/stdout (DESIGN §8; methods in runtime/rpc/). */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { globalHooks, type HookScope } from "./sessions/_hooks.ts";
import { VERSION } from "../runtime/version.ts";
import { parseSize } from "../runtime/duration.ts";
import { ExitCode, ValidationError } from "../runtime/errors.ts";
import { EventBus } from "../runtime/events.ts";
import { loadUserConfig } from "../runtime/job.ts";
import { DEFAULT_MAX_LINE_BYTES, serveRpc } from "../runtime/rpc/serve.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("rpc", cli.args, { "max-line": { type: "string" } });
  if (positionals.length > 0) {
    throw new ValidationError(`hermes rpc: unexpected argument "${positionals[0]}"`);
  }
  const maxLineBytes = values["max-line"] === undefined
    ? DEFAULT_MAX_LINE_BYTES
    : lineLimit(values["max-line"]);
  const config = loadUserConfig(`${cli.home}/config.yaml`);
  const store = cli.openStore();
  let scope: HookScope | undefined;
  try {
    scope = await globalHooks(cli, store);
    const { ended } = await serveRpc({
      input: cli.stdin === Deno.stdin.readable ? Deno.stdin : cli.stdin,
      output: Deno.stdout,
      store,
      events: new EventBus(cli.clock),
      clock: cli.clock,
      log: cli.log,
      redact: cli.redact,
      env: cli.env,
      config,
      cwd: Deno.cwd(),
      version: VERSION,
      hooks: scope.hooks,
      signal: cli.signal,
      maxLineBytes,
    });
    if (ended !== "signal") return ExitCode.success;
    return cli.signalName() === "SIGTERM" ? ExitCode.terminated : ExitCode.interrupted;
  } finally {
    await scope?.close();
    store.close();
  }
}

function lineLimit(text: string): number {
  let bytes: number;
  try {
    bytes = parseSize(text);
  } catch {
    throw new ValidationError(`Invalid --max-line "${text}": expected a size like 8MiB or 65536`);
  }
  if (bytes < 1024) throw new ValidationError(`Invalid --max-line "${text}": expected at least 1024 bytes`);
  return bytes;
}
