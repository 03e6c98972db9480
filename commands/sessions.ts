/**
 * `hermes sessions list|show|export|search|delete|archive|unarchive|prune|compact …`: find, read, export and
 * clean up stored sessions from scripts. The store-level operations live in runtime/session_admin/.
 */
import type { Cli } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import type { SessionsContext } from "./sessions/_context.ts";

type Subcommand = (ctx: SessionsContext) => Promise<number>;
// Loaded on use, so `list` (the one in start-up budgets) pays only for its own modules. Literal paths keep
// every module statically reachable for `deno bundle` / `deno compile`.
const SUBCOMMANDS: Record<string, () => Promise<Subcommand>> = {
  list: async () => (await import("./sessions/list.ts")).list,
  show: async () => (await import("./sessions/show.ts")).show,
  export: async () => (await import("./sessions/export.ts")).exportCommand,
  search: async () => (await import("./sessions/search.ts")).search,
  delete: async () => (await import("./sessions/remove.ts")).deleteCommand,
  archive: async () => (await import("./sessions/remove.ts")).archiveCommand,
  unarchive: async () => (await import("./sessions/remove.ts")).unarchiveCommand,
  prune: async () => (await import("./sessions/prune.ts")).prune,
  compact: async () => (await import("./sessions/compact.ts")).compact,
};

export const USAGE = `Usage: hermes sessions <command> [flags]

  list [--json] [--job NAME] [--status S] [--since 7d|DATE] [--archived] [--limit N]
                         newest first; a table on a terminal, a JSON array otherwise
  show ID [--all] [--json]
                         the transcript; --all adds rows replaced by compaction ([compacted])
  export ID [--format jsonl|md] [-o FILE]
                         every message; jsonl: a session line, then one line per message
  search QUERY... [--json] [--job NAME] [--limit N] [--sort newest|relevance]
                         full-text search over all messages, compacted ones included;
                         words are ANDed, "quoted phrase", prefix*
  delete ID... [--force] [--json]
  archive ID... [--force] [--json]
                         hide from list, keep everything (list --archived shows them)
  unarchive ID... [--json]
  prune --older-than 30d [--job NAME] [--dry-run] [--yes] [--json]
                         delete sessions not updated for that long (--yes or a terminal prompt)
  compact ID [--focus TEXT] [--json]
                         compact now (like /compress) with the session's own model and settings

ID is a session id, a unique prefix of one, or "latest". Several ids are all-or-none.
Secrets (values of *_KEY, *_TOKEN, *_SECRET, *PASSWORD* variables) are redacted in show, export and search.
A session held by a live process (a run, a loop, a compaction) is not deleted or archived without --force.`;

const GLOBAL_WITH_VALUE = new Set(["--home", "--db", "--log-level"]);

export async function main(cli: Cli): Promise<number> {
  const { name, rest } = splitSubcommand(cli.args);
  if (name === undefined || name === "help") {
    const asked = name === "help" || rest.includes("--help") || rest.includes("-h");
    if (asked) await cli.out(USAGE + "\n");
    else cli.err(USAGE);
    return asked ? 0 : 2;
  }
  const load = SUBCOMMANDS[name];
  if (!load) {
    throw new ValidationError(
      `Unknown command "sessions ${name}": expected one of ${Object.keys(SUBCOMMANDS).join(", ")}`,
    );
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    await cli.out(USAGE + "\n");
    return 0;
  }
  const run = await load();
  return await run({
    cli,
    args: rest,
    stdoutIsTerminal: Deno.stdout.isTerminal(),
    stdinIsTerminal: Deno.stdin.isTerminal(),
  });
}

/** The first argument that is neither a flag nor the value of a global flag names the subcommand. */
function splitSubcommand(args: string[]): { name: string | undefined; rest: string[] } {
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
