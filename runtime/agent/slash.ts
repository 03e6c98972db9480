/** Slash commands (docs/slash-commands.md): `/loop`, `/heartbeat`, `/compress`, `/status` and plugin commands. */

import type { InputSource } from "../core/types.ts";

/** Where a command's input came from (the front-end). */
export type CommandSource = InputSource;

export interface CommandContext {
  session_id: string;
  source: CommandSource;
  signal: AbortSignal;
}

export interface SlashCommand {
  name: string;
  description: string;
  /** Returns the text reported as the command's output (a run whose prompt is a command reports it as `final`). */
  run(args: string, context: CommandContext): Promise<string>;
}

/** `/name rest of line` → {name, args}; null when `text` is not a slash command. */
export function parseSlash(text: string): { name: string; args: string } | null {
  const match = /^\/([A-Za-z][\w.-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return null;
  return { name: match[1]!.toLowerCase(), args: (match[2] ?? "").trim() };
}
