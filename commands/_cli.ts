/** What every subcommand receives from the CLI edge: argv, I/O, environment and the store location. */
import { dirname } from "node:path";
import type { ParseArgsOptionsConfig } from "node:util";
import { parseArgs } from "node:util";
import type { Clock } from "../runtime/core/clock.ts";
import { errorMessage, RunError, ValidationError } from "../runtime/core/errors.ts";
import { didYouMean } from "../runtime/core/suggest.ts";
import { type CommandName, COMMANDS, GLOBAL_FLAGS, parseOptions } from "./_flags.ts";
import type { Logger, LogLevel } from "../runtime/core/log.ts";
import type { Redactor } from "../runtime/core/redact.ts";
import type { Store } from "../runtime/store/store.ts";
import { isPostgresUrl, redactUrl } from "../runtime/store/postgres/_url.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { isTransientSqliteError } from "../runtime/store/sqlite/faults.ts";
import {
  DEFAULT_RETRY_MS,
  type RetryNotice,
  type RetryPolicy,
  StoreUnavailableError,
  withRetry,
} from "../runtime/store/retry.ts";
import { retryingStore } from "../runtime/store/retrying_store.ts";
import { systemClock } from "../runtime/core/clock.ts";

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
  /** Writes a line to stderr (above the status line, if one is shown). */
  err(line: string): void;
  /** Replaces the one-line status shown at the bottom of a terminal's stderr ("" clears it); TTY only. */
  status(text: string): void;
  /**
   * Opens the store at `dbPath` (a SQLite file or a postgres:// URL); on PostgreSQL, `clock` then follows
   * the database's clock, so that leases and claims from every host are judged on one time line.
   */
  openStore(): Promise<Store>;
}

/**
 * parseArgs with the command's flags and the global ones, as `_flags.ts` defines them. A flag parseArgs
 * refuses becomes one ValidationError line naming the command and the flag, with a did-you-mean.
 */
export function parseCommandArgs<N extends CommandName>(command: N, args: string[]) {
  const flags: (typeof COMMANDS)[N]["flags"] = COMMANDS[command].flags;
  const options = { ...parseOptions(GLOBAL_FLAGS), ...parseOptions(flags) };
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ValidationError(`hermes ${command}: ${parseError(error, options)}`);
  }
}

function parseError(error: unknown, options: ParseArgsOptionsConfig): string {
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

/** How the store's transient faults are waited out: for `budgetMs`, each retry told to `onRetry`. */
export interface StoreRetry {
  budgetMs: number;
  onRetry?: (notice: RetryNotice) => void;
}

/** A store with the clock its leases and claims are judged by: `clock` on SQLite, the database's on PostgreSQL. */
export type OpenedStore = Store & { readonly clock: Clock };

/**
 * Opens the store at `location`: a postgres:// URL (its module, ~19 ms to load, is imported only then) or a
 * SQLite file, creating HOME when needed. `host` names this host in holders (`hostName`). A store that
 * cannot be used is one error line naming it.
 */
export async function openStoreAt(
  location: string,
  { clock, host, retry }: { clock: Clock; host: string; retry?: StoreRetry },
): Promise<OpenedStore> {
  const policy: RetryPolicy = { budgetMs: retry?.budgetMs ?? DEFAULT_RETRY_MS, clock: systemClock };
  const onRetry = retry?.onRetry;
  if (isPostgresUrl(location)) {
    const [{ openPostgresStore }, { isTransientPgError }] = await Promise.all([
      import("../runtime/store/postgres/postgres_store.ts"),
      import("../runtime/store/postgres/faults.ts"),
    ]);
    const where = redactUrl(location);
    const options = { policy, transient: isTransientPgError, where, ...(onRetry ? { onRetry } : {}) };
    try {
      const store = await withRetry(
        "connect",
        () => openPostgresStore(location, { host, commitCheck: options }),
        options,
      );
      return retryingStore(store, options);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      // A driver's message may span lines (a server's DETAIL): the user gets one line.
      const line = errorMessage(error).replace(/\s*\n\s*/g, " ");
      if (error instanceof ValidationError) throw new ValidationError(line, { cause: error });
      throw new RunError(`Cannot use the store at ${redactUrl(location)}: ${line}`, {
        reason: "store_error",
        cause: error,
      });
    }
  }
  try {
    Deno.mkdirSync(dirname(location), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new RunError(`Cannot create the store ${location}: ${errorMessage(error)}`, {
      reason: "store_error",
    });
  }
  const options = {
    policy,
    transient: isTransientSqliteError,
    where: location,
    ...(onRetry ? { onRetry } : {}),
  };
  try {
    const store = await withRetry(
      "open",
      () => Promise.resolve().then(() => openSqliteStore(location, { clock, host })),
      options,
    );
    return retryingStore(Object.assign(store, { clock }), options);
  } catch (error) {
    throw storeFailure(error, location) ?? error;
  }
}

// SQLite failures a user can act on, by primary result code and by their standard message (node:sqlite
// does not always set errcode).
const SQLITE_PROBLEMS: [code: number, message: string, problem: string][] = [
  [
    8,
    "attempt to write a readonly database",
    "it is read-only (reading works; this command writes: use a writable --home or --db)",
  ],
  [10, "disk I/O error", "a disk I/O error (is the disk full or the file too large?)"],
  [
    11,
    "database disk image is malformed",
    "the file is damaged (database disk image is malformed); move it aside to start a new store",
  ],
  [13, "database or disk is full", "the disk is full"],
  [14, "unable to open database file", "the file or its directory cannot be opened"],
  [
    26,
    "file is not a database",
    "it is not a SQLite database (truncated or another program's file); move it aside to start a new store",
  ],
];

/**
 * A SQLite failure as one line naming the store file, or null for any other error. A file that is not a
 * SQLite store is bad input (exit 2): the --db or --home given names the wrong file.
 */
export function storeFailure(error: unknown, dbPath: string): RunError | ValidationError | null {
  const { code, errcode } = error as { code?: string; errcode?: number };
  if (code !== "ERR_SQLITE_ERROR") return null;
  const message = errorMessage(error);
  const known = SQLITE_PROBLEMS.find(([n, text]) =>
    (typeof errcode === "number" && (errcode & 0xff) === n) || message.includes(text)
  );
  const problem = known?.[2] ?? message;
  if (known?.[0] === 26) {
    return new ValidationError(`Cannot use the store ${dbPath}: ${problem}`, { cause: error });
  }
  return new RunError(`Cannot use the store ${dbPath}: ${problem}`, { reason: "store_error", cause: error });
}
