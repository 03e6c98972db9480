/** The CLI reference, from the one definition of every command and flag (commands/_flags.ts). */
import { type CommandDef, COMMANDS, type FlagDef, GLOBAL_FLAGS } from "../../commands/_flags.ts";
import { flagText } from "../../commands/_help.ts";
import { code, table } from "./markdown.ts";

const ALL: Readonly<Record<string, CommandDef>> = COMMANDS;

export function cliMarkdown(): string {
  const parts = ["### Global flags", "Accepted by every command.", flagTable(GLOBAL_FLAGS)];
  for (const [name, command] of Object.entries(ALL)) {
    parts.push(`### \`hermes ${name}\``, "```\n" + command.usage.join("\n") + "\n```");
    if (Object.keys(command.flags).length > 0) parts.push(flagTable(command.flags));
    if (command.notes) parts.push(command.notes);
  }
  return parts.join("\n\n");
}

/** Every flag of every command as `hermes CMD --flag`, and the global ones as `--flag`. */
export function flagNames(): string[] {
  return [
    ...Object.keys(GLOBAL_FLAGS).map((name) => `--${name}`),
    ...Object.entries(ALL).flatMap(([command, def]) =>
      Object.keys(def.flags).map((f) => `hermes ${command} --${f}`)
    ),
  ];
}

function flagTable(flags: Readonly<Record<string, FlagDef>>): string {
  return table(
    ["flag", "value", "meaning"],
    Object.entries(flags).map(([name, flag]) => [
      code(`--${name}`) + (flag.short ? `, ${code(`-${flag.short}`)}` : ""),
      flag.value ? code(flag.value) : "",
      flagText(flag),
    ]),
  );
}
