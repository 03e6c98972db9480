/**
 * Recurring work whose modules load on first use. Most sessions never start a `/loop` or `/heartbeat`, and
 * loops/recurring.ts with its commands costs several milliseconds of every start-up (bench/startup_bench.ts),
 * so a session registers light commands at once and imports the real ones when one runs or the driver starts
 * (and the check for active ones when a turn asks it).
 */
import type { AgentLike, Recurring } from "../runtime/agent/seams.ts";
import type { SlashCommand } from "../runtime/agent/slash.ts";
import type { RecurringOptions } from "./recurring.ts";
import { RECURRING_COMMANDS, type RecurringCommandName } from "./recurring_commands.ts";

export interface LazyRecurringOptions extends RecurringOptions {
  /**
   * The session this process just created: it has no loop or heartbeat until one of its own commands starts
   * one (only they make a state active), so until then `isActive` answers without reading the store.
   */
  created?: string;
}

export function lazyRecurring(options: LazyRecurringOptions): Recurring {
  let loaded: Promise<Recurring> | undefined;
  const real = () => loaded ??= import("./recurring.ts").then((module) => module.createRecurring(options));
  const command = (agent: AgentLike, name: RecurringCommandName): SlashCommand => ({
    name,
    description: RECURRING_COMMANDS[name],
    run: async (args, context) => {
      const found = (await real()).commands(agent).find((c) => c.name === name);
      if (!found) throw new Error(`Cannot run /${name}: loops/recurring.ts does not provide it`);
      return await found.run(args, context);
    },
  });
  return {
    commands: (agent) => [command(agent, "loop"), command(agent, "heartbeat")],
    // Asked once the session's inputs are answered, never before its first model request.
    isActive: async (sessionId) =>
      !loaded && sessionId === options.created
        ? false
        : (await import("./recurring_active.ts")).isRecurringActive(options.store, sessionId),
    drive: async (agent, driveOptions) => await (await real()).drive(agent, driveOptions),
  };
}
