/**
 * The terminal reasons the program can end a run with, found in its source: `terminal_reason: "x"`
 * literals, the `reason` of every `new RunError(…)` and of every `super(…)` in a class extending RunError,
 * and the `LimitReason` union. The docs test holds docs/exit-codes.md to this list, so a new reason is
 * documented when it is added.
 */
import { join, relative } from "node:path";

const PRODUCTION = ["main.ts", "commands", "runtime", "loops", "plugins"];
const TEST_SUPPORT = /(_test|_testing)\.ts$|(^|\/)testdata\//;

/** Each reason with the first place (`file:line`) that names it. */
export async function terminalReasonsInCode(root: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const note = (reason: string, file: string, text: string, index: number) => {
    if (!found.has(reason)) found.set(reason, `${file}:${text.slice(0, index).split("\n").length}`);
  };
  for await (const file of productionFiles(root)) {
    const text = await Deno.readTextFile(join(root, file));
    for (const match of text.matchAll(/terminal_reason: "([a-z_]+)"/g)) {
      note(match[1]!, file, text, match.index);
    }
    const calls = [...text.matchAll(/new RunError\(/g)];
    if (/extends RunError\b/.test(text)) calls.push(...text.matchAll(/\bsuper\(/g));
    for (const call of calls) {
      const args = balanced(text, call.index + call[0].length - 1);
      for (const reason of args.matchAll(/\breason: "([a-z_]+)"/g)) note(reason[1]!, file, text, call.index);
    }
    const limits = /export type LimitReason = ([^;]+);/.exec(text);
    if (limits) {
      for (const match of limits[1]!.matchAll(/"([a-z_]+)"/g)) note(match[1]!, file, text, limits.index);
    }
  }
  return found;
}

/** The text of the parenthesised argument list starting at `open`. */
function balanced(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

async function* productionFiles(root: string): AsyncGenerator<string> {
  async function* walk(path: string): AsyncGenerator<string> {
    const info = await Deno.stat(join(root, path));
    if (info.isFile) {
      if (path.endsWith(".ts") && !TEST_SUPPORT.test(path)) yield path;
      return;
    }
    for await (const entry of Deno.readDir(join(root, path))) yield* walk(join(path, entry.name));
  }
  for (const top of PRODUCTION) yield* walk(relative(root, join(root, top)));
}
