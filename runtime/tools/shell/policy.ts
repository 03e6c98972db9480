/**
 * Allow/deny rules of `tools.shell`, applied to every simple command of a command line.
 *
 * - Patterns are globs where `*` matches anything; whitespace is normalised to single spaces and
 *   `"git *"` also matches a bare `git`.
 * - A command is matched as its words joined by single spaces, after quote removal (`git 'push'` is
 *   `git push`); leading `FOO=1` assignments are not part of it. Allow patterns see the program name as
 *   written (`/usr/bin/git` is not `git`); deny patterns also see its base name.
 * - `allow` absent: every command not denied is allowed (listing `shell` enables it). `allow` present:
 *   each simple command must match an allow pattern for every value its dynamic parts (`$X`, `$(…)`,
 *   globs) could take. `deny` wins over `allow` and applies when a command could match for some value.
 * - Commands that run other commands — `eval`, `bash/sh -c`, `env`, `xargs`, `timeout`, `find -exec`,
 *   `sudo`, … — must themselves be allowed; the deny list is also applied to the command they wrap.
 *   When the wrapped command cannot be known (a script file, stdin, `source`, a variable), the call is
 *   denied if any deny pattern exists.
 * - Redirections may only use `/dev/null`, `/dev/stdout`, `/dev/stderr`, descriptor duplication (`2>&1`)
 *   and here-strings; files are read and written with read_file/write_file so that their roots apply.
 * - Assigning PATH, IFS, BASH_ENV, ENV, SHELLOPTS, BASHOPTS, PS4, PROMPT_COMMAND or LD_* / DYLD_*
 *   is denied: it would change which program an allowed name runs.
 * - A command line the parser cannot follow with confidence is denied (see parse.ts).
 *
 * The allow list is the security boundary; a deny-only configuration is a guard against mistakes, as
 * any denylist over a general-purpose shell can be worked around by an allowed interpreter.
 */
import { parseShell, type SimpleCommand, staticValue, type Word } from "./parse.ts";
import {
  baseName,
  INTERPRETERS,
  type Reading,
  readingsOf,
  RUNTIME_ARGUMENT,
  SHELLS,
  WRAPPERS,
} from "./readings.ts";

export interface ShellRules {
  allow?: readonly string[];
  deny?: readonly string[];
}

/** The policy's verdict on one command line, from one pass over it. */
export interface ShellVerdict {
  /** Why the line may not run as the rules stand (the first reason met, text for `denied(…)`), or null. */
  reason: string | null;
  /**
   * With a reason: whether `allow` alone keeps the line out (no deny pattern nor any other check forbids
   * it), so that an approver may let it run.
   */
  askable: boolean;
}

/** What the rules say about `command`, evaluated once: every check runs, the allow-list's misses noted. */
export function evaluateShellCommand(command: string, rules: ShellRules): ShellVerdict {
  const misses: string[] = [];
  const forbidden = new Policy(rules).checkSource(command, { allow: true, depth: 0, misses });
  // The traversal stops at a forbidding reason, so a miss noted before it came first.
  const reason = misses[0] ?? forbidden;
  return { reason, askable: reason !== null && forbidden === null };
}

/** Why `command` may not run (text for `denied(…)`), or null when it may. */
export function checkShellCommand(command: string, rules: ShellRules): string | null {
  return evaluateShellCommand(command, rules).reason;
}

const STAR = null;
/** A pattern or a command as a sequence of characters; null is `*` in a pattern, a dynamic part in a command. */
type Glob = (string | null)[];

const OPAQUE = new Set(["source", "."]);
const PROTECTED_ENV = /^(PATH|IFS|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_\w*|DYLD_\w*)$/;
const SAFE_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"]);
const MAX_DEPTH = 8;
/** Later words of a wrapper read as the start of a command; a line with more is opaque. */
const MAX_WRAPPED = 128;
const EMPTY: Word = { parts: [{ literal: "" }], raw: "" };

interface Mode {
  /** False for wrapped commands: only the outer command has to be allowed. */
  allow: boolean;
  depth: number;
  /** Where a command outside `allow` is noted, the line then checked on as if allowed. */
  misses: string[];
}

class Policy {
  #allow: Glob[][] | undefined;
  #deny: Glob[][];

  constructor(rules: ShellRules) {
    this.#allow = rules.allow?.map(compilePattern);
    this.#deny = (rules.deny ?? []).map(compilePattern);
  }

  checkSource(source: string, mode: Mode): string | null {
    const parsed = parseShell(source);
    if (!parsed.ok) return `cannot check ${quote(source.trim())}: ${parsed.reason}`;
    for (const command of parsed.commands) {
      const reason = this.#checkSimple(command, mode);
      if (reason) return reason;
    }
    return null;
  }

  #checkSimple(command: SimpleCommand, mode: Mode): string | null {
    const text = command.text;
    const assigned = command.assignments.find((name) => PROTECTED_ENV.test(name));
    if (assigned) {
      return `assigning ${assigned} is not allowed, as it changes which programs run (in ${quote(text)})`;
    }
    for (const redirect of command.redirects) {
      if (!redirectIsSafe(redirect.op, redirect.target)) {
        return `${quote(text)} redirects to or from a file (${redirect.text.trim()}); only /dev/null and ` +
          `descriptors such as 2>&1 are allowed — use read_file and write_file for files`;
      }
    }
    if (command.words.length === 0) {
      // `GIT_EDITOR=…` alone still sets what a later command runs.
      return this.#checkReadings(readingsOf([EMPTY], command.assigned), text, mode);
    }
    if (mode.allow && !this.#allows(command.words)) {
      mode.misses.push(`${quote(text)} is not in tools.shell.allow`);
    }
    return this.#checkRun(command.words, text, mode, command.assigned);
  }

  #allows(words: Word[]): boolean {
    return !this.#allow || this.#allow.some((p) => p.some((g) => coversAll(g, toGlob(words, false).glob)));
  }

  /** Deny patterns against a command and its other readings, and the checks of what it runs. */
  #checkRun(words: Word[], text: string, mode: Mode, assigned: Word[] = []): string | null {
    if (mode.depth > MAX_DEPTH) return `cannot check ${quote(text)}: commands are nested too deeply`;
    const head = staticValue(words[0]!);
    // Where a wrapper's command starts depends on the wrapper's options, so every word may start it.
    const wrapper = head !== null && WRAPPERS.has(baseName(head));
    if (this.#denied(words, wrapper)) return `${quote(text)} matches tools.shell.deny`;
    if (head === null) return this.#opaque(text);
    const own = this.#checkInterpreter(words, text, mode.depth, true);
    if (own) return own;
    const readings = this.#checkReadings(readingsOf(words, assigned), text, mode);
    if (readings || !wrapper) return readings;
    let starts = 0;
    for (let i = 1; i < words.length; i++) {
      const value = staticValue(words[i]!);
      if (value === null) continue;
      if (INTERPRETERS.has(baseName(value))) {
        const wrapped = this.#checkInterpreter(words.slice(i), text, mode.depth, false);
        if (wrapped) return wrapped;
      }
      // A later word may be the wrapped command: what it would run is checked against deny only.
      if (!/^[^-\s=][^\s=]*$/.test(value)) continue;
      if (++starts > MAX_WRAPPED) {
        return this.#opaque(text, `more than ${MAX_WRAPPED} words that may be commands`);
      }
      const readings = readingsOf(words.slice(i), [], { nested: true });
      const later = this.#checkReadings(readings, text, { ...mode, allow: false });
      if (later) return later;
    }
    return null;
  }

  /** The verdict on other readings of a command (readings.ts); `text` is the command as written. */
  #checkReadings(readings: Reading[], text: string, mode: Mode): string | null {
    // What the line would run first: a definite denial says more than "cannot be checked".
    const ordered = [...readings.filter((r) => !("opaque" in r)), ...readings.filter((r) => "opaque" in r)];
    for (const reading of ordered) {
      if ("opaque" in reading) {
        const reason = this.#opaque(text, reading.opaque);
        if (reason) return reason;
        continue;
      }
      const inner: Mode = { allow: mode.allow && reading.allow, depth: mode.depth + 1, misses: mode.misses };
      const by = ` (run by ${quote(text)} through ${reading.via})`;
      if ("script" in reading) {
        const misses: string[] = [];
        const reason = this.checkSource(reading.script, { ...inner, misses });
        mode.misses.push(...misses.map((miss) => miss + by));
        if (reason) return reason + by;
        continue;
      }
      if (inner.allow && !this.#allows(reading.command)) {
        mode.misses.push(`${quote(wordsText(reading.command))} is not in tools.shell.allow${by}`);
      }
      if (reading.final) {
        const head = staticValue(reading.command[0]!);
        const wrapper = head !== null && WRAPPERS.has(baseName(head));
        if (this.#denied(reading.command, wrapper)) return `${quote(text)} matches tools.shell.deny`;
        continue;
      }
      const reason = this.#checkRun(reading.command, text, inner);
      if (reason) return reason;
    }
    return null;
  }

  /**
   * For shells, eval and source: the verdict on what they run (checked against deny only); undefined
   * for other programs. `certain` is false for a wrapper argument that may not be the wrapped command.
   */
  #checkInterpreter(words: Word[], text: string, depth: number, certain: boolean): string | null | undefined {
    const name = baseName(staticValue(words[0]!) ?? "");
    let payload: string | null | undefined;
    if (SHELLS.has(name)) {
      payload = shellPayload(words);
      if (payload === undefined) return null;
    } else if (name === "eval") {
      const args = words.slice(1).map(staticValue);
      payload = args.some((a) => a === null) ? null : args.join(" ");
    } else if (OPAQUE.has(name)) {
      payload = certain ? null : undefined;
    }
    if (payload === undefined) return undefined;
    if (payload === null) return this.#opaque(text);
    return this.checkSource(payload, { allow: false, depth: depth + 1, misses: [] });
  }

  /** Could a deny pattern match the command, or (`everyWord`) a command starting at any later word? */
  #denied(words: Word[], everyWord: boolean): boolean {
    const { glob, starts } = toGlob(words, everyWord);
    return this.#deny.some((p) => p.some((g) => intersects(g, glob, starts)));
  }

  #opaque(text: string, why?: string): string | null {
    if (this.#deny.length === 0) return null;
    return `${quote(text)} runs commands that cannot be checked against tools.shell.deny${
      why ? ` (${why})` : ""
    }`;
  }
}

/**
 * The script a shell invocation runs: the `-c` string, undefined when it runs nothing (a bare `-c`),
 * or null when it is not known (a script file, stdin, a dynamic argument).
 */
function shellPayload(words: Word[]): string | null | undefined {
  let command = false;
  for (let i = 1; i < words.length; i++) {
    const value = staticValue(words[i]!);
    if (value === null) return null;
    if (value === "--" || value === "-") {
      const next = words[i + 1];
      return next === undefined ? null : command ? staticValue(next) : null;
    }
    if (/^[-+]/.test(value)) {
      if (/^-[A-Za-z]*c/.test(value)) command = true;
      if (/^[-+][A-Za-z]*[oO]$/.test(value) || value === "--rcfile" || value === "--init-file") i++;
      continue;
    }
    return command ? value : null;
  }
  return command ? undefined : null;
}

function redirectIsSafe(op: string, target: Word): boolean {
  if (op === "<<<") return true;
  const value = staticValue(target);
  if (value === null) return false;
  if ((op === ">&" || op === "<&") && /^(\d+-?|-)$/.test(value)) return true;
  return SAFE_TARGETS.has(value);
}

/** A command in double quotes for messages, shortened when long. */
function quote(text: string): string {
  return `"${text.length > 200 ? `${text.slice(0, 200)}…` : text}"`;
}

/** A command's words as text (dynamic parts as written), for messages. */
function wordsText(words: Word[]): string {
  return words.map((word) => word.raw).join(" ");
}

/**
 * The words as one glob, and where a command may start in it: the first word and, with `everyWord`,
 * every later one; a static word with a `/` may also start after its last `/` (`/bin/rm` is `rm`).
 */
function toGlob(words: Word[], everyWord: boolean): { glob: Glob; starts: number[] } {
  const glob: Glob = [];
  const starts: number[] = [];
  words.forEach((word, i) => {
    if (i > 0) glob.push(" ");
    if (i === 0 || (everyWord && word !== RUNTIME_ARGUMENT)) {
      starts.push(glob.length);
      const value = staticValue(word);
      if (value?.includes("/")) starts.push(glob.length + value.lastIndexOf("/") + 1);
    }
    for (const part of word.parts) {
      if ("dynamic" in part) glob.push(STAR);
      else glob.push(...part.literal);
    }
  });
  return { glob, starts };
}

/** A pattern and, for `"x *"`, its bare form `"x"`. */
function compilePattern(pattern: string): Glob[] {
  const normalised = pattern.trim().replace(/\s+/g, " ");
  const glob: Glob = [...normalised].map((c) => (c === "*" ? STAR : c));
  return normalised.endsWith(" *") ? [glob, glob.slice(0, -2)] : [glob];
}

/** True when `pattern` matches every string `command` may stand for (its dynamic parts are opaque). */
function coversAll(pattern: Glob, command: Glob): boolean {
  let row = new Array<boolean>(command.length + 1).fill(false);
  row[command.length] = true;
  for (let i = pattern.length - 1; i >= 0; i--) {
    const next = new Array<boolean>(command.length + 1).fill(false);
    for (let j = command.length; j >= 0; j--) {
      next[j] = pattern[i] === STAR
        ? row[j]! || (j < command.length && next[j + 1]!)
        : j < command.length && command[j] !== STAR && command[j] === pattern[i] && row[j + 1]!;
    }
    row = next;
  }
  return row[0]!;
}

/** True when some string matches both `pattern` and `command` from one of `starts` (dynamic parts match anything). */
function intersects(pattern: Glob, command: Glob, starts: number[]): boolean {
  // row[j] after step i: pattern[i..] and command[j..] share a match.
  let row = new Array<boolean>(command.length + 1).fill(false);
  row[command.length] = true;
  for (let j = command.length - 1; j >= 0 && command[j] === STAR; j--) row[j] = true;
  for (let i = pattern.length - 1; i >= 0; i--) {
    const next = new Array<boolean>(command.length + 1).fill(false);
    for (let j = command.length; j >= 0; j--) {
      if (pattern[i] === STAR) next[j] = row[j]! || (j < command.length && next[j + 1]!);
      else if (j < command.length && command[j] === STAR) next[j] = next[j + 1]! || row[j]!;
      else next[j] = j < command.length && command[j] === pattern[i] && row[j + 1]!;
    }
    row = next;
  }
  return starts.some((j) => row[j]);
}
