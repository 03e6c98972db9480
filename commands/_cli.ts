/** What every subcommand receives from the CLI edge: argv, I/O, environment and the store location. */
import { dirname } from "node:path";
import type { ParseArgsOptionsConfig } from "node:util";
import { parseArgs } from "node:util";
import type { Clock } from "../runtime/core/clock.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import type { Logger, LogLevel } from "../runtime/core/log.ts";
import type { Redactor } from "../runtime/core/redact.ts";
import type { Store } from "../runtime/store/store.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";

export interface Cli {
  /** Arguments after the subcommand name (global flags included; parse them with `globalOptions`). */
  args: string[];
  /** The environment snapshot taken at start-up; the only place env is read. */
  env: Record<string, string>;
  home: string;
  dbPath: string;
  logLevel: LogLevel;
  quiet: boolean;
  isTTY: boolean;
  clock: Clock;
  log: Logger;
  redact: Redactor;
  /** Aborted on SIGINT/SIGTERM; `signalName` tells which. */
  signal: AbortSignal;
  signalName(): "SIGINT" | "SIGTERM" | null;
  stdin: ReadableStream<Uint8Array>;
  /** Writes product text to stdout (awaits backpressure). */
  out(text: string): Promise<void>;
  /** Writes a line to stderr. */
  err(line: string): void;
  openStore(): Store;
}

export const globalOptions = {
  home: { type: "string" },
  db: { type: "string" },
  "log-level": { type: "string" },
  quiet: { type: "boolean", short: "q" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const satisfies ParseArgsOptionsConfig;

/** parseArgs with the global flags merged in; unknown flags become a ValidationError naming the flag. */
export function parseCommandArgs<T extends ParseArgsOptionsConfig>(
  command: string,
  args: string[],
  options: T,
) {
  try {
    return parseArgs({
      args,
      options: { ...globalOptions, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
    throw new ValidationError(`hermes ${command}: ${message.replace(/\. To specify.*$/, "")}`);
  }
}

/** Opens the store, creating HOME when needed. */
export function openStoreAt(dbPath: string, clock: Clock): Store {
  Deno.mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
  return openSqliteStore(dbPath, { clock });
}
