/**
 * `hermes sessions list|show|export|search|delete|archive|unarchive|prune|compact|compactions …`: find, read, export and
 * clean up stored sessions from scripts. The operations are the App's (runtime/app/).
 */
import type { Cli } from "./_cli.ts";
import { splitSubcommand } from "./_flags.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { didYouMean } from "../runtime/core/suggest.ts";
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
  compactions: async () => (await import("./sessions/compactions.ts")).compactions,
};

export async function main(cli: Cli): Promise<number> {
  const { name, rest } = splitSubcommand(cli.args);
  if (name === undefined || name === "help") {
    const { commandHelp } = await import("./_help.ts");
    if (name === undefined) cli.err(commandHelp("sessions")!);
    else await cli.out(commandHelp("sessions")! + "\n");
    return name === undefined ? 2 : 0;
  }
  const load = SUBCOMMANDS[name];
  if (!load) {
    const names = Object.keys(SUBCOMMANDS);
    throw new ValidationError(
      `unknown command "sessions ${name}"${didYouMean(name, names)}: expected one of ${names.join(", ")}`,
    );
  }
  const run = await load();
  return await run({
    cli,
    args: rest,
    stdoutIsTerminal: Deno.stdout.isTerminal(),
    stdinIsTerminal: Deno.stdin.isTerminal(),
  });
}
