/**
 * hermes — the CLI edge. Parses the global flags, dispatches to commands/, and is the one place
 * where errors become exit codes.
 */
import type { Cli } from "./commands/_cli.ts";
import { systemClock } from "./runtime/core/clock.ts";
import { errorMessage, ExitCode, RunError, ValidationError } from "./runtime/core/errors.ts";
import { createLogger, type LogLevel } from "./runtime/core/log.ts";
import { createRedactor } from "./runtime/core/redact.ts";
import { VERSION } from "./runtime/core/version.ts";

type CommandModule = { main(cli: Cli): Promise<number> };
// Literal import paths keep every module statically reachable for `deno bundle` / `deno compile`.
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  run: () => import("./commands/run.ts"),
  validate: () => import("./commands/validate.ts"),
  schema: () => import("./commands/schema.ts"),
  sessions: () => import("./commands/sessions.ts"),
  rpc: () => import("./commands/rpc.ts"),
  acp: () => import("./commands/acp.ts"),
  plugins: () => import("./commands/plugins.ts"),
  daemon: () => import("./commands/daemon.ts"),
};

const USAGE = `hermes ${VERSION} — headless agent runtime

Usage:
  hermes run JOB.yaml [--input k=v]... [--output text|json|stream-json] [--resume SESSION] [--model NAME]
  hermes run -p "prompt" [--model NAME]      (prompt from stdin with -p -)
  hermes validate JOB.yaml...
  hermes schema
  hermes sessions list|show|export|search|delete|archive|unarchive|prune|compact … [--json]
  hermes daemon [JOB.yaml | DIR]... [--grace DURATION]
  hermes daemon status [JOB.yaml | DIR]... [--json]
  hermes plugins list|check PATH
  hermes rpc [--max-line SIZE]
  hermes acp

Global flags: --home DIR  --db FILE  --log-level error|warn|info|debug  --quiet  --version  --help`;

const GLOBAL_WITH_VALUE = new Set(["--home", "--db", "--log-level"]);
const LOG_LEVELS = new Set(["error", "warn", "info", "debug"]);

/** The usage lines of one command, plus the global flags. */
function commandUsage(name: string): string {
  const lines = USAGE.split("\n");
  const own = lines.filter((line) =>
    line.trimStart().startsWith(`hermes ${name} `) || line.trim() === `hermes ${name}`
  );
  const globals = lines.filter((line) => line.startsWith("Global flags"));
  return ["Usage:", ...own, "", ...globals].join("\n");
}

/** The first argument that is neither a global flag nor its value. */
function findCommand(argv: string[]): { name: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (GLOBAL_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith("-")) continue;
    return { name: arg, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { name: undefined, rest: argv };
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

export async function main(argv: string[], env: Record<string, string>): Promise<number> {
  const write = (line: string) => console.error(line);
  const { name, rest } = findCommand(argv);
  const logLevelText = globalValue(argv, "--log-level") ?? env.HERMES_LOG_LEVEL ?? "info";
  const quiet = argv.includes("--quiet") || argv.includes("-q");
  try {
    if (!LOG_LEVELS.has(logLevelText)) {
      throw new ValidationError(`Invalid --log-level "${logLevelText}": expected error, warn, info or debug`);
    }
    const logLevel = (quiet ? "error" : logLevelText) as LogLevel;
    if (argv.includes("--version") && (name === undefined || name === "version")) {
      console.log(`hermes ${VERSION}`);
      return ExitCode.success;
    }
    if (name === undefined || name === "help") {
      (name === "help" || argv.includes("--help") || argv.includes("-h") ? console.log : console.error)(
        USAGE,
      );
      return name === undefined && !argv.includes("--help") && !argv.includes("-h") ? ExitCode.invalid : 0;
    }
    const load = COMMANDS[name];
    if (!load) {
      throw new ValidationError(
        `Unknown command "${name}": expected one of ${Object.keys(COMMANDS).join(", ")}`,
      );
    }
    if (name !== "sessions" && (argv.includes("--help") || argv.includes("-h"))) {
      console.log(commandUsage(name));
      return ExitCode.success;
    }
    // Loaded only now, so `--version` and `--help` do not pay for SQLite.
    const [{ openStoreAt }, command] = await Promise.all([import("./commands/_cli.ts"), load()]);
    const home = globalValue(argv, "--home") ?? env.HERMES_HOME ?? `${env.HOME ?? "."}/.hermes`;
    const dbPath = globalValue(argv, "--db") ?? `${home}/state.db`;
    const redact = createRedactor(env);
    const controller = new AbortController();
    let received: "SIGINT" | "SIGTERM" | null = null;
    const onSignal = (sig: "SIGINT" | "SIGTERM") => () => {
      if (received) Deno.exit(sig === "SIGINT" ? ExitCode.interrupted : ExitCode.terminated);
      received = sig;
      controller.abort(new DOMException(`received ${sig}`, "AbortError"));
    };
    const onInt = onSignal("SIGINT");
    const onTerm = onSignal("SIGTERM");
    Deno.addSignalListener("SIGINT", onInt);
    Deno.addSignalListener("SIGTERM", onTerm);
    const encoder = new TextEncoder();
    const cli: Cli = {
      args: rest,
      env,
      home,
      dbPath,
      logLevel,
      quiet,
      isTTY: Deno.stderr.isTerminal(),
      clock: systemClock,
      log: createLogger({ level: logLevel, write, redact }),
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
      openStore: () => openStoreAt(dbPath, systemClock),
    };
    try {
      return await command.main(cli);
    } finally {
      Deno.removeSignalListener("SIGINT", onInt);
      Deno.removeSignalListener("SIGTERM", onTerm);
    }
  } catch (error) {
    if (error instanceof ValidationError || error instanceof RunError) {
      write(`hermes: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof Deno.errors.BrokenPipe) return ExitCode.success;
    write(`hermes: internal error: ${errorMessage(error)}`);
    if (logLevelText === "debug" && error instanceof Error && error.stack) write(error.stack);
    return ExitCode.failed;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args, Deno.env.toObject()));
}
