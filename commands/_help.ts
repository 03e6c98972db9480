/**
 * The text of `hermes --help`, `hermes help CMD` and `hermes CMD --help`, rendered from the command and flag
 * definitions in `_flags.ts` (the same ones the parser uses). No other imports, so help costs no start-up.
 */
import { COMMAND_NAMES, type CommandDef, COMMANDS as DEFINED, type FlagDef, GLOBAL_FLAGS } from "./_flags.ts";

export { COMMAND_NAMES };

/** Every command by name (`"sessions prune"` for a sessions subcommand). */
export const COMMANDS: Readonly<Record<string, CommandDef>> = DEFINED;

export function overview(version: string): string {
  const usage = COMMAND_NAMES.filter((name) => name !== "help").flatMap((name) => COMMANDS[name]!.usage);
  return [
    `hermes ${version} — headless agent runtime`,
    "",
    "Usage:",
    ...usage.map((line) => `  ${line}`),
    "  hermes help [COMMAND]",
    "",
    "Global flags:",
    ...flagLines(GLOBAL_FLAGS),
    "",
    "Run `hermes help COMMAND` for a command's flags.",
  ].join("\n");
}

/** `hermes help NAME`: its usage, each flag with a one-line description, then the global flags. */
export function commandHelp(name: string): string | undefined {
  const help = COMMANDS[name];
  if (!help) return undefined;
  const lines = help.usage.length === 1
    ? [`Usage: ${help.usage[0]}`]
    : ["Usage:", ...help.usage.map((line) => `  ${line}`)];
  if (name === "sessions") {
    const subcommands = Object.keys(COMMANDS).filter((key) => key.startsWith("sessions "));
    for (const key of subcommands) {
      lines.push("", `  ${COMMANDS[key]!.usage[0]!.replace(/^hermes /, "")}`);
      lines.push(...flagLines(COMMANDS[key]!.flags).map((line) => `  ${line}`));
    }
  } else if (Object.keys(help.flags).length > 0) lines.push("", "Flags:", ...flagLines(help.flags));
  if (help.notes) lines.push("", help.notes);
  lines.push("", "Global flags:", ...flagLines(GLOBAL_FLAGS));
  return lines.join("\n");
}

/** `-p, --prompt PROMPT` */
export function flagHead(name: string, flag: FlagDef): string {
  return `${flag.short ? `-${flag.short}, ` : ""}--${name}${flag.value ? ` ${flag.value}` : ""}`;
}

/** The flag's line of text, with "(repeatable)" when it may be given several times. */
export function flagText(flag: FlagDef): string {
  return flag.multiple ? `${flag.text} (repeatable)` : flag.text;
}

function flagLines(flags: Readonly<Record<string, FlagDef>>): string[] {
  const heads = Object.entries(flags).map(([name, flag]) =>
    `${flag.short ? "" : "    "}${flagHead(name, flag)}`
  );
  const width = Math.max(0, ...heads.map((head) => head.length)) + 2;
  return Object.values(flags).map((flag, i) => `  ${heads[i]!.padEnd(width)}${flagText(flag)}`);
}
