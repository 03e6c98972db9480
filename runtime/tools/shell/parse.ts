/**
 * A conservative parser for the bash subset that `tools.shell` can check.
 *
 * It finds every simple command a command line would run — across `;`, `&&`, `||`, `|`, `&`, newlines,
 * subshells, `{ …; }`, `$(…)`, backticks and `<(…)`/`>(…)` — together with its redirections. Word parts
 * whose value is only known at run time (parameter expansion, command substitution, globs, brace
 * expansion, `~`, `$'…'`) are kept as `dynamic` parts so the policy can reason about every value they
 * might take. Anything it cannot follow with confidence (unterminated quotes, heredocs, arithmetic,
 * `case`, function definitions, complex `${…}`) is a parse error: the caller denies the command.
 */

export type WordPart = { literal: string } | { dynamic: string };

export interface Word {
  parts: WordPart[];
  /** Source text of the word. */
  raw: string;
}

export interface Redirect {
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<>`, `>&`, `<&` or `<<<`. */
  op: string;
  target: Word;
  /** Source text, e.g. `2>&1` or `> out.txt`. */
  text: string;
}

export interface SimpleCommand {
  /** Names of variables assigned before the command (`FOO=1 cmd`) or on their own (`FOO=1`). */
  assignments: string[];
  /** The same assignments as words (`FOO=$x`), for their values: see `assignmentOf`. */
  assigned: Word[];
  /** The command and its arguments; empty for bare assignments and for redirections of a compound. */
  words: Word[];
  redirects: Redirect[];
  /** Source text from the command name (or the start) to the end of the simple command. */
  text: string;
}

export type ParseResult = { ok: true; commands: SimpleCommand[] } | { ok: false; reason: string };

class ParseError extends Error {}

export function parseShell(source: string): ParseResult {
  const commands: SimpleCommand[] = [];
  try {
    new Parser(source, commands, 0).parseSequence(null);
    return { ok: true, commands };
  } catch (error) {
    if (error instanceof ParseError) return { ok: false, reason: error.message };
    throw error;
  }
}

/** The value of a word without dynamic parts, else null. */
export function staticValue(word: Word): string | null {
  let value = "";
  for (const part of word.parts) {
    if ("dynamic" in part) return null;
    value += part.literal;
  }
  return value;
}

/**
 * A word of the form `NAME=value` (or `NAME+=value`) as its name and its value as a word; null for other
 * words. Used for assignments before a command and for those given to `env`, `export`, `declare`, ….
 */
export function assignmentOf(word: Word): { name: string; value: Word } | null {
  const match = ASSIGNMENT.exec(word.raw);
  const first = word.parts[0];
  if (!match || match[2] === "[" || !first || !("literal" in first)) return null;
  const prefix = match[0];
  if (!first.literal.startsWith(prefix)) return null;
  const parts = [{ literal: first.literal.slice(prefix.length) }, ...word.parts.slice(1)];
  return { name: match[1]!, value: { parts: mergeLiterals(parts), raw: word.raw.slice(prefix.length) } };
}

const MAX_DEPTH = 32;
const METACHARS = " \t\n;&|()<>";
/** Reserved words that only introduce or close a compound command around simple commands. */
const TRANSPARENT_RESERVED = new Set([
  "{",
  "}",
  "!",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "time",
]);
const UNSUPPORTED_RESERVED = new Set(["case", "esac", "function", "coproc", "select", "[["]);
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)(\+?=|\[)/;
const REDIRECT = /^(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(&>>|&>|<<<|<<-|<<|<>|<&|<|>>|>&|>\||>)/;
/** `${name}`, `${#name}` and `${name<op>word}` with a word that expands nothing; arithmetic forms excluded. */
const SIMPLE_PARAMETER =
  /^\$\{#?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])((:?[-=+?]|##?|%%?|\/\/?)[^$`"'\\{}()[\]@<>;&|\n]*)?\}/;

class Parser {
  #src: string;
  #pos = 0;
  #out: SimpleCommand[];
  #depth: number;

  constructor(source: string, out: SimpleCommand[], depth: number) {
    this.#src = source;
    this.#out = out;
    this.#depth = depth;
  }

  /** Parses commands until end of input (closer null) or an unmatched `)` (left unconsumed). */
  parseSequence(closer: ")" | null): void {
    if (++this.#depth > MAX_DEPTH) throw new ParseError("the command is nested too deeply");
    for (;;) {
      this.#skipSeparators();
      const c = this.#src[this.#pos];
      if (c === undefined) {
        if (closer) throw new ParseError(`unterminated "("`);
        break;
      }
      if (c === ")") {
        if (closer) break;
        throw new ParseError(`unexpected ")"`);
      }
      if (c === "(") this.#parseSubshell();
      else this.#parseSimpleCommand();
    }
    this.#depth--;
  }

  #parseSubshell(): void {
    const start = this.#pos;
    if (this.#src[start + 1] === "(") throw new ParseError("arithmetic commands (( … )) are not supported");
    this.#pos++;
    this.parseSequence(")");
    this.#pos++;
    const redirects: Redirect[] = [];
    for (;;) {
      this.#skipBlanks();
      const redirect = this.#tryRedirect();
      if (!redirect) break;
      redirects.push(redirect);
    }
    if (redirects.length > 0) {
      const text = this.#src.slice(start, this.#pos).trim();
      this.#out.push({ assignments: [], assigned: [], words: [], redirects, text });
    }
  }

  #parseSimpleCommand(): void {
    const start = this.#pos;
    const words: { word: Word; start: number }[] = [];
    const redirects: Redirect[] = [];
    for (;;) {
      this.#skipBlanks();
      const c = this.#src[this.#pos];
      if (c === undefined || c === "#") break;
      const redirect = this.#tryRedirect();
      if (redirect) {
        redirects.push(redirect);
        continue;
      }
      if (";&|\n)".includes(c)) break;
      if (c === "(") {
        throw new ParseError(`unexpected "(": function definitions and arrays are not supported`);
      }
      const wordStart = this.#pos;
      words.push({ word: this.#parseWord(), start: wordStart });
    }
    const end = this.#pos;
    if (this.#src[this.#pos] === "#") this.#skipComment();

    let i = 0;
    while (i < words.length && TRANSPARENT_RESERVED.has(words[i]!.word.raw)) i++;
    const head = words[i]?.word.raw;
    if (head !== undefined && UNSUPPORTED_RESERVED.has(head)) {
      throw new ParseError(`"${head}" is not supported`);
    }
    // `for NAME in WORDS` runs nothing itself; substitutions in WORDS were already collected.
    if (head === "for") i = words.length;
    const assignments: string[] = [];
    const assigned: Word[] = [];
    for (; i < words.length; i++) {
      const match = ASSIGNMENT.exec(words[i]!.word.raw);
      if (!match) break;
      if (match[2] === "[") throw new ParseError("array element assignments are not supported");
      assignments.push(match[1]!);
      assigned.push(words[i]!.word);
    }
    const commandWords = words.slice(i);
    if (commandWords.length === 0 && redirects.length === 0 && assignments.length === 0) return;
    const textStart = commandWords[0]?.start ?? start;
    const text = this.#src.slice(textStart, end).trim();
    this.#out.push({ assignments, assigned, words: commandWords.map((w) => w.word), redirects, text });
  }

  #tryRedirect(): Redirect | null {
    const start = this.#pos;
    const match = REDIRECT.exec(this.#src.slice(start, start + 40));
    if (!match) return null;
    const op = match[2]!;
    // `<(…)` and `>(…)` are process substitutions, parsed as words.
    if (!match[1] && (op === "<" || op === ">") && this.#src[start + 1] === "(") return null;
    if (op === "<<" || op === "<<-") throw new ParseError("heredocs (<<) are not supported");
    this.#pos += match[0].length;
    this.#skipBlanks();
    const c = this.#src[this.#pos];
    if (c === undefined || (METACHARS.includes(c) && this.#src[this.#pos + 1] !== "(")) {
      throw new ParseError(`redirection "${match[0]}" has no target`);
    }
    const target = this.#parseWord();
    return { op, target, text: this.#src.slice(start, this.#pos) };
  }

  #parseWord(): Word {
    const start = this.#pos;
    const parts: WordPart[] = [];
    let braces = false;
    for (;;) {
      const c = this.#src[this.#pos];
      if (c === undefined) break;
      if (METACHARS.includes(c)) {
        if ((c === "<" || c === ">") && this.#pos === start && this.#src[this.#pos + 1] === "(") {
          this.#pos += 2;
          this.#parseNested();
          parts.push({ dynamic: this.#src.slice(start, this.#pos) });
          continue;
        }
        break;
      }
      switch (c) {
        case "\\": {
          const next = this.#src[this.#pos + 1];
          if (next === undefined) throw new ParseError("the command ends with a backslash");
          if (next !== "\n") parts.push({ literal: next });
          this.#pos += 2;
          break;
        }
        case "'": {
          const end = this.#src.indexOf("'", this.#pos + 1);
          if (end < 0) throw new ParseError("unterminated single quote");
          parts.push({ literal: this.#src.slice(this.#pos + 1, end) });
          this.#pos = end + 1;
          break;
        }
        case '"':
          this.#parseDoubleQuoted(parts);
          break;
        case "$":
          this.#parseDollar(parts, false);
          break;
        case "`":
          this.#parseBackticks(parts, false);
          break;
        case "*":
        case "?":
          parts.push({ dynamic: c });
          this.#pos++;
          break;
        case "[":
          parts.push(this.#closesOnSameWord("]") ? { dynamic: c } : { literal: c });
          this.#pos++;
          break;
        case "~":
          parts.push(this.#pos === start ? { dynamic: c } : { literal: c });
          this.#pos++;
          break;
        case "{":
        case "}":
          braces = true;
          parts.push({ literal: c });
          this.#pos++;
          break;
        default:
          parts.push({ literal: c });
          this.#pos++;
      }
    }
    const raw = this.#src.slice(start, this.#pos);
    // Brace expansion (`{a,b}`, `{1..3}`) can turn one word into several different ones.
    if (braces && /[,]|\.\./.test(raw)) return { parts: [{ dynamic: raw }], raw };
    return { parts: mergeLiterals(parts), raw };
  }

  #parseDoubleQuoted(parts: WordPart[]): void {
    this.#pos++;
    let literal = "";
    const flush = () => {
      parts.push({ literal });
      literal = "";
    };
    for (;;) {
      const c = this.#src[this.#pos];
      if (c === undefined) throw new ParseError("unterminated double quote");
      if (c === '"') {
        this.#pos++;
        break;
      }
      if (c === "\\") {
        const next = this.#src[this.#pos + 1];
        if (next !== undefined && '$`"\\'.includes(next)) literal += next;
        else if (next !== "\n") literal += c + (next ?? "");
        this.#pos += 2;
      } else if (c === "$" || c === "`") {
        flush();
        if (c === "$") this.#parseDollar(parts, true);
        else this.#parseBackticks(parts, true);
      } else {
        literal += c;
        this.#pos++;
      }
    }
    flush();
  }

  #parseDollar(parts: WordPart[], inDoubleQuotes: boolean): void {
    const start = this.#pos;
    const next = this.#src[start + 1];
    if (next === "(") {
      if (this.#src[start + 2] === "(") {
        throw new ParseError("arithmetic expansion $(( … )) is not supported");
      }
      this.#pos += 2;
      this.#parseNested();
    } else if (next === "[") {
      throw new ParseError("arithmetic expansion $[ … ] is not supported");
    } else if (next === "{") {
      const match = SIMPLE_PARAMETER.exec(this.#src.slice(start));
      if (!match) throw new ParseError("this ${…} parameter expansion is too complex to check");
      this.#pos += match[0].length;
    } else if (next === "'" && !inDoubleQuotes) {
      this.#pos += 2;
      for (;;) {
        const c = this.#src[this.#pos];
        if (c === undefined) throw new ParseError("unterminated $'…' quote");
        this.#pos += c === "\\" ? 2 : 1;
        if (c === "'") break;
      }
    } else if (next === '"' && !inDoubleQuotes) {
      this.#pos++;
      this.#parseDoubleQuoted(parts);
      return;
    } else if (next !== undefined && /[A-Za-z_]/.test(next)) {
      this.#pos++;
      while (/[A-Za-z0-9_]/.test(this.#src[this.#pos] ?? "")) this.#pos++;
    } else if (next !== undefined && /[0-9@*#?$!-]/.test(next)) {
      this.#pos += 2;
    } else {
      parts.push({ literal: "$" });
      this.#pos++;
      return;
    }
    parts.push({ dynamic: this.#src.slice(start, this.#pos) });
  }

  #parseBackticks(parts: WordPart[], inDoubleQuotes: boolean): void {
    const start = this.#pos;
    let inner = "";
    let i = start + 1;
    for (;;) {
      const c = this.#src[i];
      if (c === undefined) throw new ParseError("unterminated backquote");
      if (c === "`") break;
      const next = this.#src[i + 1];
      if (c === "\\" && next !== undefined && ("`$\\".includes(next) || (inDoubleQuotes && next === '"'))) {
        inner += next;
        i += 2;
      } else {
        inner += c;
        i++;
      }
    }
    this.#pos = i + 1;
    new Parser(inner, this.#out, this.#depth).parseSequence(null);
    parts.push({ dynamic: this.#src.slice(start, this.#pos) });
  }

  /** After `$(`, `<(` or `>(`: the nested commands and the closing `)`. */
  #parseNested(): void {
    this.parseSequence(")");
    this.#pos++;
  }

  #closesOnSameWord(closer: string): boolean {
    for (let i = this.#pos + 1; i < this.#src.length; i++) {
      const c = this.#src[i]!;
      if (c === closer) return true;
      if (METACHARS.includes(c)) return false;
    }
    return false;
  }

  #skipBlanks(): void {
    for (;;) {
      const c = this.#src[this.#pos];
      if (c === " " || c === "\t") this.#pos++;
      else if (c === "\\" && this.#src[this.#pos + 1] === "\n") this.#pos += 2;
      else return;
    }
  }

  #skipSeparators(): void {
    for (;;) {
      this.#skipBlanks();
      const c = this.#src[this.#pos];
      if (c === "#") this.#skipComment();
      else if (c !== undefined && "\n;&|".includes(c)) this.#pos++;
      else return;
    }
  }

  #skipComment(): void {
    const end = this.#src.indexOf("\n", this.#pos);
    this.#pos = end < 0 ? this.#src.length : end;
  }
}

function mergeLiterals(parts: WordPart[]): WordPart[] {
  const merged: WordPart[] = [];
  for (const part of parts) {
    const last = merged[merged.length - 1];
    if (last && "literal" in last && "literal" in part) last.literal += part.literal;
    else merged.push({ ...part });
  }
  if (merged.length === 0) merged.push({ literal: "" });
  return merged;
}
