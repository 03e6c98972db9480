/**
 * `hermes run --args LINE`: more flags in one line of text, as a CI system hands them over (the GitHub Action's
 * `args` input), split into words by a fixed grammar and never by a shell: the text is data, so a value in it
 * (a workflow input, a branch name) can add words but never run anything.
 *
 * The grammar (docs/cli.md): words are separated by spaces, tabs and newlines; `'…'` keeps everything inside
 * as it is; `"…"` too, except that `\"` and `\\` stand for `"` and `\`; outside quotes `\` keeps the next
 * character as it is; a `#` that starts a word starts a comment to the end of the line. Nothing is expanded:
 * `$HOME`, `` `cmd` ``, `*`, `~`, `;` and `|` are characters like any other. An unterminated quote or a
 * trailing `\` is an error.
 */
import { ValidationError } from "../runtime/core/errors.ts";
import { GLOBAL_FLAGS } from "./_flags.ts";

/** The global flags' names and short names: main reads them before the command, so a line may not hold one. */
const GLOBALS: ReadonlySet<string> = new Set(
  Object.entries(GLOBAL_FLAGS).flatMap(([name, flag]) => ["short" in flag ? flag.short : name, name]),
);

/** The words of `line`; throws a ValidationError naming the column of an unterminated quote or escape. */
export function splitArgsLine(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let i = 0;
  const fail = (what: string, at: number): never => {
    const lineNo = line.slice(0, at).split("\n").length;
    const col = at - line.lastIndexOf("\n", at - 1);
    throw new ValidationError(`hermes run: --args: ${what} at line ${lineNo}, column ${col}`);
  };
  while (i < line.length) {
    const char = line[i]!;
    if (char === " " || char === "\t" || char === "\n" || char === "\r") {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else if (char === "#" && word === null) {
      const end = line.indexOf("\n", i);
      i = end === -1 ? line.length : end;
    } else if (char === "'") {
      const end = line.indexOf("'", i + 1);
      if (end === -1) fail("unterminated ' quote", i);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end + 1;
    } else if (char === '"') {
      let text = "";
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && (line[j + 1] === '"' || line[j + 1] === "\\")) j++;
        text += line[j];
      }
      if (j >= line.length) fail('unterminated " quote', i);
      word = (word ?? "") + text;
      i = j + 1;
    } else if (char === "\\") {
      if (i + 1 >= line.length) fail("a \\ with nothing after it", i);
      word = (word ?? "") + line[i + 1];
      i += 2;
    } else {
      word = (word ?? "") + char;
      i++;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/**
 * `args` with each `--args LINE` (or `--args=LINE`) replaced, in place, by the words of its line. Global flags
 * are read before the command starts, so a line may not hold one (nor another `--args`).
 */
export function expandArgsLines(args: readonly string[]): string[] {
  const expanded: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      expanded.push(...args.slice(i));
      break;
    }
    let line: string | undefined;
    if (arg === "--args") {
      line = args[++i];
      if (line === undefined) throw new ValidationError("hermes run: --args needs a value");
    } else if (arg.startsWith("--args=")) line = arg.slice("--args=".length);
    if (line === undefined) {
      expanded.push(arg);
      continue;
    }
    for (const word of splitArgsLine(line)) {
      const name = /^--?([^=]+)/.exec(word)?.[1];
      if (name === "args" || (name !== undefined && GLOBALS.has(name))) {
        throw new ValidationError(
          `hermes run: --args cannot hold ${word.split("=")[0]}: ` +
            (name === "args"
              ? "one line of flags, not nested ones"
              : "a global flag goes before the command"),
        );
      }
      expanded.push(word);
    }
  }
  return expanded;
}
