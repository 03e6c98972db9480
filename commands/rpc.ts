/** `hermes rpc [--max-line SIZE]`: JSON-RPC 2.0 over stdin/stdout (docs/rpc.md; methods in runtime/rpc/). */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { serveWith } from "./_server.ts";
import { parseSize } from "../runtime/core/duration.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { DEFAULT_MAX_LINE_BYTES, serveRpc } from "../runtime/rpc/serve.ts";

export function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("rpc", cli.args);
  if (positionals.length > 0) {
    throw new ValidationError(`hermes rpc: unexpected argument "${positionals[0]}"`);
  }
  const maxLineBytes = values["max-line"] === undefined
    ? DEFAULT_MAX_LINE_BYTES
    : lineLimit(values["max-line"]);
  return serveWith(cli, (context) =>
    serveRpc({
      ...context,
      input: cli.stdin === Deno.stdin.readable ? Deno.stdin : cli.stdin,
      output: Deno.stdout,
      maxLineBytes,
    }));
}

function lineLimit(text: string): number {
  let bytes: number;
  try {
    bytes = parseSize(text);
  } catch {
    throw new ValidationError(`invalid --max-line "${text}": expected a size like 8MiB or 65536`);
  }
  if (bytes < 1024) throw new ValidationError(`invalid --max-line "${text}": expected at least 1024 bytes`);
  return bytes;
}
