/**
 * The global flags (`--home`, `--db`, …) and the split of a command's arguments into its subcommand: all
 * main.ts reads before it knows the command, apart from the rest of _flags.ts (every command's flags, ~25 KB)
 * so that `hermes sessions list`, answered before a command is set up, does not load those.
 */
import type { FlagDef } from "./_flags.ts";

export const GLOBAL_FLAGS = {
  home: { value: "DIR", text: "Hermes home (default $HERMES_HOME or ~/.hermes); the store is HOME/state.db" },
  db: {
    value: "FILE|URL",
    text: "the store: a SQLite file or postgres://… (also $HERMES_DATABASE_URL, config.yaml store.url)",
  },
  policy: {
    value: "FILE",
    text:
      "trust policy bounding what job files may ask for (also $HERMES_POLICY; replaces config.yaml policy:)",
  },
  "log-level": { value: "LEVEL", text: "error, warn, info (default) or debug; also $HERMES_LOG_LEVEL" },
  quiet: { short: "q", text: "only errors on stderr" },
  help: { short: "h", text: "show this help" },
  version: { short: "V", text: "print the version" },
} as const satisfies Record<string, FlagDef>;

/** The global flags that take a value (`--home DIR`): a word after one is its value, not a command. */
export const GLOBAL_WITH_VALUE: ReadonlySet<string> = new Set(
  Object.entries(GLOBAL_FLAGS).flatMap(([name, flag]) => "value" in flag ? [`--${name}`] : []),
);

/** The first argument that is neither a flag nor the value of a global flag names the subcommand. */
export function splitSubcommand(args: string[]): { name: string | undefined; rest: string[] } {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") break;
    if (GLOBAL_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith("-")) continue;
    return { name: arg, rest: [...args.slice(0, i), ...args.slice(i + 1)] };
  }
  return { name: undefined, rest: args };
}
