/**
 * hermes — the CLI edge. Parses the global flags, dispatches to commands/, and is the one place
 * where errors become exit codes.
 */
// Only what every start needs before it knows the command: the rest is imported where it is used, so that
// `sessions list` (answered before a command is set up) and `--version` load none of it.
import type { Cli } from "./commands/_cli.ts";
import { GLOBAL_FLAGS, GLOBAL_WITH_VALUE, splitSubcommand } from "./commands/_global_flags.ts";
import type { Clock } from "./runtime/core/clock.ts";
import { errorMessage, ExitCode, Interruption, RunError, ValidationError } from "./runtime/core/errors.ts";
import type { LogLevel } from "./runtime/core/log.ts";

type CommandModule = { main(cli: Cli): Promise<number> };
// Literal import paths keep every module statically reachable for `deno bundle` / `deno compile`.
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  run: () => import("./commands/run.ts"),
  replay: () => import("./commands/replay.ts"),
  test: () => import("./commands/test.ts"),
  validate: () => import("./commands/validate.ts"),
  schema: () => import("./commands/schema.ts"),
  sessions: () => import("./commands/sessions.ts"),
  rpc: () => import("./commands/rpc.ts"),
  acp: () => import("./commands/acp.ts"),
  plugins: () => import("./commands/plugins.ts"),
  mcp: () => import("./commands/mcp.ts"),
  daemon: () => import("./commands/daemon.ts"),
  submit: () => import("./commands/submit.ts"),
  runs: () => import("./commands/runs.ts"),
  doctor: () => import("./commands/doctor.ts"),
  store: () => import("./commands/store.ts"),
  cost: () => import("./commands/cost.ts"),
  serve: () => import("./commands/serve.ts"),
  tokens: () => import("./commands/tokens.ts"),
};

/** Whether a global switch (`--quiet` or `-q`) is among `args`. */
function hasSwitch(args: string[], name: "quiet" | "help" | "version"): boolean {
  return args.includes(`--${name}`) || args.includes(`-${GLOBAL_FLAGS[name].short}`);
}
const LOG_LEVELS = new Set(["error", "warn", "info", "debug"]);

/** `hermes help [COMMAND [SUBCOMMAND]]` and `COMMAND [SUBCOMMAND] --help`; the help text costs no parser. */
async function help(words: string[], toStdout: boolean): Promise<number> {
  const [{ COMMANDS, COMMAND_NAMES, commandHelp, overview }, { VERSION }] = await Promise.all([
    import("./commands/_help.ts"),
    import("./runtime/core/version.ts"),
  ]);
  const [name, sub] = words;
  if (name === undefined) {
    (toStdout ? console.log : console.error)(overview(VERSION));
    return toStdout ? ExitCode.success : ExitCode.invalid;
  }
  if (!COMMANDS[name]) throw await unknownCommand(name, COMMAND_NAMES);
  const text = (sub !== undefined ? commandHelp(`${name} ${sub}`) : undefined) ?? commandHelp(name)!;
  console.log(text);
  return ExitCode.success;
}

async function unknownCommand(name: string, names: string[]): Promise<ValidationError> {
  const { didYouMean } = await import("./runtime/core/suggest.ts");
  return new ValidationError(
    `unknown command "${name}"${didYouMean(name, names)}: expected one of ${names.join(", ")}`,
  );
}

/** The first argument that is neither a global flag nor its value. */
function findCommand(argv: string[]): { name: string | undefined; rest: string[] } {
  const at = firstWord(argv);
  if (at === -1) return { name: undefined, rest: argv };
  return { name: argv[at], rest: [...argv.slice(0, at), ...argv.slice(at + 1)] };
}

/** The arguments that are neither flags nor values of global flags. */
function words(argv: string[]): string[] {
  return argv.filter((arg, i) => !arg.startsWith("-") && !GLOBAL_WITH_VALUE.has(argv[i - 1] ?? ""));
}

function firstWord(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return -1;
    if (GLOBAL_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith("-")) return i;
  }
  return -1;
}

function globalValue(argv: string[], flag: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    if (arg === flag) value = argv[++i];
    else if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
  }
  return value;
}

function homeOf(argv: string[], env: Record<string, string>): string {
  return globalValue(argv, "--home") ?? env.HERMES_HOME ?? `${env.HOME ?? "."}/.hermes`;
}

/**
 * Hermes's stderr: whole lines, written synchronously, above a status line (TTY progress) that stays at the
 * bottom. A class, so that a start that writes nothing there (`--version`, `sessions list`) compiles none of
 * it.
 */
class Stderr {
  #statusLine = "";
  #encoder = new TextEncoder();

  write(text: string): void {
    const bytes = this.#encoder.encode(text);
    let written = 0;
    while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
  }

  line(line: string): void {
    this.write(this.#statusLine ? `\r\x1b[2K${line}\n${this.#statusLine}` : `${line}\n`);
  }

  status(text: string): void {
    if (text === this.#statusLine) return;
    this.write(`\r\x1b[2K${text}`);
    this.#statusLine = text;
  }
}

/**
 * Runs `argv`'s command. `--version`, help and `sessions list` (when list_quick.ts has the whole answer) are
 * answered here; every other command is set up and run by {@linkcode runCommand}, and a failure reported by
 * {@linkcode failure}: each is compiled only by a start that calls it.
 */
export async function main(argv: string[], env: Record<string, string>): Promise<number> {
  const stderr = new Stderr();
  // On a GitHub runner every stderr line is read for workflow commands: text a tool or the model chose
  // (a denial reason, an error, a progress line) must not become one. Hermes's own go through stderr.line.
  // Imported there alone: elsewhere a module less on every start.
  const inert = env.GITHUB_ACTIONS === "true"
    ? (await import("./runtime/core/workflow_commands.ts")).inertLine
    : undefined;
  const write = inert ? (line: string) => stderr.line(inert(line)) : (line: string) => stderr.line(line);
  const { name, rest } = findCommand(argv);
  const logLevelText = globalValue(argv, "--log-level") ?? env.HERMES_LOG_LEVEL ?? "info";
  const quiet = hasSwitch(argv, "quiet");
  // The store the command opened, once known: a failure names it.
  const store: { location?: string } = {};
  try {
    if (!LOG_LEVELS.has(logLevelText)) {
      throw new ValidationError(`invalid --log-level "${logLevelText}": expected error, warn, info or debug`);
    }
    const logLevel = (quiet ? "error" : logLevelText) as LogLevel;
    const asksHelp = hasSwitch(rest, "help");
    if (hasSwitch(argv, "version") && (name === undefined || name === "version")) {
      // Written, not console.log: the console's first use costs ~0.3 ms.
      const line = new TextEncoder().encode(`${(await import("./runtime/core/version.ts")).versionLine()}\n`);
      let written = 0;
      while (written < line.length) written += Deno.stdout.writeSync(line.subarray(written));
      return ExitCode.success;
    }
    if (name === undefined) return await help([], asksHelp);
    if (name === "help") return await help(words(rest), true);
    const load = COMMANDS[name];
    if (!load) throw await unknownCommand(name, [...Object.keys(COMMANDS), "help"]);
    if (asksHelp) {
      const sub = rest[firstWord(rest)];
      return await help(name === "sessions" && sub !== undefined ? [name, sub] : [name], true);
    }
    if (name === "sessions") {
      // `sessions list` (its start-up measured against a bare node:sqlite script) answers before the set-up
      // below when it can: JSON from a SQLite store at the current schema.
      const { name: sub, rest: args } = splitSubcommand(rest);
      if (sub === "list") {
        const { quickList } = await import("./commands/sessions/list_quick.ts");
        const code = await quickList(args, { home: homeOf(argv, env), db: globalValue(argv, "--db"), env });
        if (code !== undefined) return code;
      }
    }
    return await runCommand(load, { argv, env, rest, logLevel, quiet, stderr, write, store });
  } catch (error) {
    return await failure(error, { argv, env, write, store, debug: logLevelText === "debug" });
  }
}

/** Sets a command up (logger, secrets it redacts, signal handlers, the store opener) and runs it. */
async function runCommand(
  load: () => Promise<CommandModule>,
  { argv, env, rest, logLevel, quiet, stderr, write, store }: {
    argv: string[];
    env: Record<string, string>;
    rest: string[];
    logLevel: LogLevel;
    quiet: boolean;
    stderr: Stderr;
    write: (line: string) => void;
    store: { location?: string };
  },
): Promise<number> {
  // Loaded only now, so `--version` and `--help` do not pay for SQLite, nor for the providers' registry
  // that the secrets' names come from.
  const [
    { hostName, storeLocation },
    { openStore },
    { processSecrets },
    command,
    { resolve },
    { systemClock },
    { createLogger },
    { redactorOf },
    { retryLine },
  ] = await Promise.all([
    import("./commands/_cli.ts"),
    import("./runtime/store/open.ts"),
    import("./runtime/session/secrets.ts"),
    load(),
    import("./runtime/core/path.ts"),
    import("./runtime/core/clock.ts"),
    import("./runtime/core/log.ts"),
    import("./runtime/core/redact.ts"),
    import("./runtime/store/retry_notice.ts"),
  ]);
  const home = homeOf(argv, env);
  const configured = await storeLocation(home, { flag: globalValue(argv, "--db"), env });
  const dbPath = store.location = configured.location;
  const host = hostName(env);
  // The commands' clock: this host's, until a PostgreSQL store is opened; then the database's, so that
  // leases and slot claims stamped by every host share one time line.
  let storeClock: Clock = systemClock;
  const clock: Clock = { now: () => storeClock.now(), sleep: (ms, signal) => storeClock.sleep(ms, signal) };
  const redact = redactorOf(processSecrets(env));
  const controller = new AbortController();
  let received: "SIGINT" | "SIGTERM" | null = null;
  const onSignal = (sig: "SIGINT" | "SIGTERM") => () => {
    if (received) Deno.exit(sig === "SIGINT" ? ExitCode.interrupted : ExitCode.terminated);
    received = sig;
    controller.abort(new Interruption(sig));
  };
  const onInt = onSignal("SIGINT");
  const onTerm = onSignal("SIGTERM");
  Deno.addSignalListener("SIGINT", onInt);
  Deno.addSignalListener("SIGTERM", onTerm);
  const log = createLogger({ level: logLevel, write, redact });
  const encoder = new TextEncoder();
  const cli: Cli = {
    args: rest,
    // The home in effect, however it was chosen (--home, HERMES_HOME, ~/.hermes): sandboxes hide it.
    env: { ...env, HERMES_HOME: resolve(home) },
    home,
    dbPath,
    policyFile: globalValue(argv, "--policy") ?? env.HERMES_POLICY,
    host,
    logLevel,
    quiet,
    isTTY: Deno.stderr.isTerminal(),
    stdoutIsTTY: Deno.stdout.isTerminal(),
    clock,
    log,
    redact,
    signal: controller.signal,
    signalName: () => received,
    // A getter: creating the stream costs ~2 ms of start-up, paid only by commands that read stdin.
    get stdin() {
      return Deno.stdin.readable;
    },
    out: async (text) => {
      const bytes = encoder.encode(text);
      let written = 0;
      while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
    },
    err: write,
    workflowCommand: (line) => stderr.line(line),
    status: (text) => stderr.status(text),
    openStore: async () => {
      const opened = await openStore(dbPath, {
        clock: systemClock,
        host,
        // Each retry is one stderr line: a database blip is visible, and not an error.
        retry: { budgetMs: configured.retryMs, onRetry: (notice) => log.warn(retryLine(notice)) },
      });
      storeClock = opened.clock;
      return opened;
    },
  };
  try {
    return await command.main(cli);
  } finally {
    Deno.removeSignalListener("SIGINT", onInt);
    Deno.removeSignalListener("SIGTERM", onTerm);
  }
}

/** `error` as the CLI reports it (stderr lines) and the exit code it ends the process with. */
async function failure(
  error: unknown,
  { argv, env, write, store, debug }: {
    argv: string[];
    env: Record<string, string>;
    write: (line: string) => void;
    store: { location?: string };
    debug: boolean;
  },
): Promise<number> {
  if (error instanceof ValidationError || error instanceof RunError) {
    // Messages that already name their command ("hermes run: …") are not prefixed twice. One line per
    // problem of invalid input (a job file may have several); a run's error, which can quote a server or
    // the model, stays one line (on a GitHub runner its line breaks are escaped).
    const lines = error instanceof ValidationError ? error.message.split("\n") : [error.message];
    for (const line of lines) {
      write(line.startsWith("hermes ") ? line : `hermes: ${line}`);
    }
    return error.exitCode;
  }
  if (error instanceof Deno.errors.BrokenPipe) return ExitCode.success;
  const failed = (await import("./runtime/store/open.ts")).storeFailure(
    error,
    store.location ?? globalValue(argv, "--db") ?? `${homeOf(argv, env)}/state.db`,
  );
  if (failed) {
    write(`hermes: ${failed.message}`);
    return failed.exitCode;
  }
  write(`hermes: internal error: ${errorMessage(error)}`);
  if (debug && error instanceof Error && error.stack) write(error.stack);
  return ExitCode.failed;
}

if (import.meta.main) {
  // At once: nothing a command started may keep the process alive past its answer. Deno stores a module's
  // V8 code cache when it compiles it, not when the evaluation ends, so waiting for a later task saves
  // nothing; a timer would cost every start the wait (a 0 ms AbortSignal.timeout fires 3-4 ms later).
  Deno.exit(await main(Deno.args, Deno.env.toObject()));
}
