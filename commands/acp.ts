/** `hermes acp`: an Agent Client Protocol agent over stdin/stdout (runtime/acp/agent.ts). */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { serveWith } from "./_server.ts";
import { serveAcp } from "../runtime/acp/agent.ts";
import { ValidationError } from "../runtime/core/errors.ts";

export function main(cli: Cli): Promise<number> {
  const { positionals } = parseCommandArgs("acp", cli.args);
  if (positionals.length > 0) {
    throw new ValidationError(`hermes acp: unexpected argument "${positionals[0]}"`);
  }
  return serveWith(
    cli,
    (context) => serveAcp({ ...context, input: cli.stdin, output: Deno.stdout.writable }),
  );
}
