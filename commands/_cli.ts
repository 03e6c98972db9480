/** What every subcommand receives from the CLI edge: argv, I/O, environment and the store location. */
import type { Clock } from "../runtime/core/clock.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { didYouMean } from "../runtime/core/suggest.ts";
import { type CommandName, COMMANDS, GLOBAL_FLAGS, parseOptions } from "./_flags.ts";
import { parseArgs, type ParseOption } from "./_parse_args.ts";
import type { Logger, LogLevel } from "../runtime/core/log.ts";
import type { Redactor } from "../runtime/core/redact.ts";
import type { Store } from "../runtime/store/store.ts";
import { DEFAULT_RETRY_MS } from "../runtime/store/retry_notice.ts";

export interface Cli {
  /** Arguments after the subcommand name (global flags included; parse them with `parseCommandArgs`). */
  args: string[];
  /** The environment snapshot taken at start-up; the only place env is read. */
  env: Record<string, string>;
  home: string;
  dbPath: string;
  /** The trust policy file (`--policy`, else `HERMES_POLICY`), replacing config.yaml's `policy:`. */
  policyFile: string | undefined;
  /** This host's name in the holders and owners this process writes (`hostName`). */
  host: string;
  logLevel: LogLevel;
  quiet: boolean;
  /** Whether stderr is a terminal. */
  isTTY: boolean;
  /** Whether stdout is a terminal (text output is then rendered with visible control characters). */
  stdoutIsTTY: boolean;
  clock: Clock;
  log: Logger;
  redact: Redactor;
  /** Aborted on SIGINT/SIGTERM; `signalName` tells which. */
  signal: AbortSignal;
  signalName(): "SIGINT" | "SIGTERM" | null;
  stdin: ReadableStream<Uint8Array>;
  /** Writes product text to stdout (awaits backpressure). */
  out(text: string): Promise<void>;
  /**
   * Writes a line to stderr (above the status line, if one is shown); under `GITHUB_ACTIONS=true` made inert
   * first (`runtime/core/workflow_commands.ts`), so no text Hermes prints becomes a workflow command.
   */
  err(line: string): void;
  /** Writes a workflow command Hermes composed (`::error …::`, values escaped) to stderr as it is. */
  workflowCommand?(line: string): void;
  /** Replaces the one-line status shown at the bottom of a terminal's stderr ("" clears it); TTY only. */
  status(text: string): void;
  /**
   * Opens the store at `dbPath` (a SQLite file or a postgres:// URL, runtime/store/open.ts); on PostgreSQL,
   * `clock` then follows
   * the database's clock, so that leases and claims from every host are judged on one time line.
   */
  openStore(): Promise<Store>;
}

/**
 * The command's flags and the global ones, as `_flags.ts` defines them, parsed as `node:util`'s strict
 * parseArgs does (`_parse_args.ts`). A flag parseArgs
 * refuses becomes one ValidationError line naming the command and the flag, with a did-you-mean.
 */
export function parseCommandArgs<N extends CommandName>(command: N, args: string[]) {
  const flags: (typeof COMMANDS)[N]["flags"] = COMMANDS[command].flags;
  const options = { ...parseOptions(GLOBAL_FLAGS), ...parseOptions(flags) };
  try {
    return parseArgs(args, options);
  } catch (error) {
    throw new ValidationError(`hermes ${command}: ${parseError(error, options)}`);
  }
}

function parseError(error: unknown, options: Record<string, ParseOption>): string {
  const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
  const unknown = /^Unknown option '([^']+)'/.exec(message)?.[1];
  if (unknown !== undefined) {
    const names = Object.entries(options).flatMap((
      [name, o],
    ) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
    const flag = unknown.split("=")[0]!;
    // A one-letter flag has no meaningful "nearest"; a long one is matched against the long names.
    const suggestion = flag.startsWith("--")
      ? didYouMean(flag, names.filter((name) => name.startsWith("--")))
      : "";
    return `unknown flag "${flag}"${suggestion}`;
  }
  const missing = /^Option '(-\w, )?(--[\w-]+)[^']*' argument missing/.exec(message)?.[2];
  if (missing !== undefined) return `${missing} needs a value`;
  return message.replace(/\. To specify.*$/, "");
}

/**
 * Where the store is (--db > HERMES_DATABASE_URL > config.yaml's `store.url` > HOME/state.db) and how long
 * its transient faults are waited out (config.yaml's `store.retry`, default 60 s).
 */
export async function storeLocation(
  home: string,
  given: { flag: string | undefined; env: Record<string, string> },
): Promise<{ location: string; retryMs: number }> {
  const configured = await configuredStore(`${home}/config.yaml`);
  return {
    location: given.flag ?? given.env.HERMES_DATABASE_URL ?? configured?.url ?? `${home}/state.db`,
    retryMs: configured?.retry ?? DEFAULT_RETRY_MS,
  };
}

/**
 * The name of this host in holders and owners: HERMES_HOST_ID when set (several hosts simulated on one
 * machine, or a stable name for a container whose hostname changes), else the hostname. Read once, here:
 * every lease, claim and liveness judgement of the process gets it passed in.
 */
export function hostName(env: Record<string, string>): string {
  return env.HERMES_HOST_ID || Deno.hostname();
}

async function configuredStore(path: string): Promise<{ url?: string; retry?: number } | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return undefined; // absent, or unreadable: the commands that read config.yaml report that
  }
  // Validating config.yaml loads yaml and zod (~20 ms): only a file with a top-level `store:` pays for it here.
  if (!/^store\s*:/m.test(text)) return undefined;
  const { loadUserConfig } = await import("../runtime/config/job_file.ts");
  const store = loadUserConfig(path)?.store;
  if (!store) return undefined;
  const { parseDuration } = await import("../runtime/core/duration.ts");
  return {
    ...(store.url !== undefined ? { url: store.url } : {}),
    ...(store.retry !== undefined ? { retry: parseDuration(store.retry) } : {}),
  };
}
