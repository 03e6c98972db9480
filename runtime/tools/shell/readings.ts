/**
 * Other readings of one simple command, so that `tools.shell.deny` (and, for what the command runs,
 * `tools.shell.allow`) judge what would actually happen, not only the words as written:
 *
 * - option grammars: git's global options precisely (git.ts); for every other program the words
 *   after leading options, each option taken with or without one value (`kubectl -n x delete` is read as
 *   `kubectl delete` too) — a reading may be wrong, never missed, since deny applies when *some* reading
 *   matches;
 * - commands a program runs from its options, configuration or environment (git aliases, `-c
 *   core.fsmonitor=…`, `GIT_EXTERNAL_DIFF=…`, `rebase -x`, …) — checked like commands of the line;
 * - arguments filled in at run time: `{}` of find/xargs/parallel and what xargs/parallel append;
 * - command strings given to wrappers (`su -c '…'`, `flock -c '…'`, `watch '…'`, `script -c '…'`);
 * - what cannot be known (an alias from a config file, `--config-env`, `GIT_CONFIG_*`, `HOME=…`,
 *   `GIT_DIR=…`, `unset GIT_CONFIG_COUNT`): opaque, denied when any deny pattern exists.
 */
import { assignmentOf, staticValue, type Word } from "./parse.ts";
import { gitReadings } from "./git.ts";

export type Reading =
  /** Another command this runs or another reading of it; `allow`: it must also pass tools.shell.allow. */
  | { command: Word[]; allow: boolean; via: string; final?: true }
  /** Shell source this runs (with `sh -c`). */
  | { script: string; allow: boolean; via: string }
  /** Something this runs that cannot be known. */
  | { opaque: string };

/** Programs that run their arguments as a command line (tools.shell.deny looks at every word of theirs). */
export const WRAPPERS = new Set([
  "env",
  "exec",
  "command",
  "builtin",
  "nohup",
  "nice",
  "ionice",
  "timeout",
  "xargs",
  "sudo",
  "doas",
  "su",
  "runuser",
  "setsid",
  "stdbuf",
  "time",
  "find",
  "watch",
  "strace",
  "ltrace",
  "chroot",
  "flock",
  "taskset",
  "unbuffer",
  "parallel",
  "script",
  "ssh",
  "busybox",
  "systemd-run",
]);

export const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish", "rbash"]);
/** Shells, eval and source: their own grammar is read by policy.ts. */
export const INTERPRETERS = new Set([...SHELLS, "source", ".", "eval"]);

/** Builtins and wrappers that pass `NAME=value` words on as environment. */
const ENV_SETTERS = new Set(["env", "export", "declare", "typeset", "local", "readonly", "sudo", "doas"]);
/** Variables whose value is a command some program runs (git, ssh, editors in `git commit`, …). */
const COMMAND_ENV =
  /^(GIT_(EXTERNAL_DIFF|SSH|SSH_COMMAND|EDITOR|SEQUENCE_EDITOR|ASKPASS|PROXY_COMMAND)|SSH_ASKPASS|EDITOR|VISUAL)$/;
/** Pagers only run on a terminal, which a tool call has not: checked against deny only. */
const PAGER_ENV = /^(GIT_PAGER|PAGER|MANPAGER)$/;
/**
 * Variables that point git (and other programs) at configuration, repositories or programs the line does
 * not show: a `.gitconfig` under another HOME, a planted repository, git's own settings (git_env.ts
 * sets GIT_CONFIG_* for every command; changing or removing them would undo that).
 */
const OPAQUE_ENV =
  /^(GIT_(CONFIG(_\w+)?|EXEC_PATH|TEMPLATE_DIR|DIR|WORK_TREE|COMMON_DIR|CEILING_DIRECTORIES)|HOME|XDG_CONFIG_HOME)$/;
/** Leading options considered per program; a longer run is read as opaque. */
const MAX_OPTIONS = 32;

/** An argument filled in at run time (find's `{}`, what xargs reads); never where a command starts. */
export const RUNTIME_ARGUMENT: Word = { parts: [{ dynamic: "{}" }], raw: "{}" };
const DYNAMIC: Word = { parts: [{ dynamic: "…" }], raw: "…" };
const EXEC_OPTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function literalWord(value: string): Word {
  return { parts: [{ literal: value }], raw: value };
}

/**
 * Every other reading of `words` (the command as written is not among them). `nested`: the words follow
 * a wrapper whose own readings already looked at every word (its command strings).
 */
export function readingsOf(
  words: readonly Word[],
  assigned: readonly Word[] = [],
  options: { nested?: boolean } = {},
): Reading[] {
  const head = staticValue(words[0]!);
  if (head === null) return [];
  const name = baseName(head);
  const readings = [...environmentReadings(assigned, words, name), ...unsetReadings(name, words)];
  if (name === "git" || name.startsWith("git-")) readings.push(...gitReadings(words));
  else if (WRAPPERS.has(name)) readings.push(...wrapperReadings(name, words, options.nested ?? false));
  // Wrappers are read at every word instead; interpreters by their own grammar.
  else if (!INTERPRETERS.has(name)) readings.push(...optionReadings(words));
  return readings;
}

/** Values of run-changing variables assigned before the command (or given to env, export, …). */
function environmentReadings(assigned: readonly Word[], words: readonly Word[], name: string): Reading[] {
  const readings: Reading[] = [];
  for (const word of [...assigned, ...settings(name, words)]) {
    const assignment = assignmentOf(word);
    if (!assignment) continue;
    const { name } = assignment;
    if (OPAQUE_ENV.test(name)) {
      readings.push({ opaque: `${name} brings in git configuration or programs the command does not show` });
      continue;
    }
    const command = COMMAND_ENV.test(name);
    if (!command && !PAGER_ENV.test(name)) continue;
    const value = staticValue(assignment.value);
    if (value === null) readings.push({ opaque: `the command in ${name} is only known at run time` });
    else if (value.trim() !== "") readings.push({ script: value, allow: command, via: name });
  }
  return readings;
}

/** `unset NAME`, `export -n NAME`, `env -u NAME` and `env -i` of the variables above. */
function unsetReadings(name: string, words: readonly Word[]): Reading[] {
  const values = words.slice(1).map(staticValue);
  let names: (string | null)[] = [];
  if (name === "unset") names = values;
  else if (name === "export" && values.some((v) => v !== null && /^-\w*n/.test(v))) names = values;
  else if (name === "env") {
    for (let i = 0; i < values.length; i++) {
      const value = values[i]!;
      if (value === null) names.push(null);
      else if (
        value === "-i" || value === "-" || value === "--ignore-environment" || /^-[^-]*i/.test(value)
      ) {
        return [{ opaque: "env -i drops the git settings every command runs with" }];
      } else if (value === "-u" || value === "--unset") names.push(values[++i] ?? null);
      else if (/^-u./.test(value)) names.push(value.slice(2));
      else if (value.startsWith("--unset=")) names.push(value.slice(8));
      else if (!value.startsWith("-")) break;
    }
  }
  const hit = names.find((n) => n === null || OPAQUE_ENV.test(n));
  if (hit === undefined) return [];
  return [{
    opaque: `${name} ${hit ?? "a variable only known at run time"} changes which git configuration applies`,
  }];
}

/** The `NAME=value` words an env-setting program passes on: all of export's, those before env's command. */
function settings(name: string, words: readonly Word[]): readonly Word[] {
  if (!ENV_SETTERS.has(name)) return [];
  if (!WRAPPERS.has(name)) return words.slice(1);
  const end = words.findIndex((word, i) => {
    const value = staticValue(word);
    return i > 0 && value !== null && !value.startsWith("-") && assignmentOf(word) === null;
  });
  return words.slice(1, end < 0 ? words.length : end);
}

/**
 * `prog OPTS… WORD…` read as `prog WORD…` for every way the leading options could consume values: each
 * dash word (or dynamic word) may stand alone or take the next word as its value; `--` ends them.
 */
function optionReadings(words: readonly Word[]): Reading[] {
  const readings: Reading[] = [];
  const reachable = new Set<number>([1]);
  for (let i = 1; i < words.length && i <= MAX_OPTIONS; i++) {
    if (!reachable.has(i)) continue;
    const value = staticValue(words[i]!);
    if (value === "--") {
      reachable.add(i + 1);
      continue;
    }
    if (i > 1) readings.push({ command: [words[0]!, ...words.slice(i)], allow: false, via: "its options" });
    const option = value === null || (value.startsWith("-") && value !== "-");
    if (!option) continue;
    reachable.add(i + 1);
    reachable.add(i + 2);
  }
  if (words.length > MAX_OPTIONS + 1 && reachable.has(MAX_OPTIONS + 1)) {
    readings.push({ opaque: `more than ${MAX_OPTIONS} leading options` });
  }
  return readings;
}

/** Run-time arguments of find/xargs/parallel, and command strings given to wrappers. */
function wrapperReadings(name: string, words: readonly Word[], nested: boolean): Reading[] {
  const readings: Reading[] = [];
  const replaced = replaceStrings(name, words);
  if (replaced.size > 0 || name === "xargs" || name === "parallel") {
    const filled = words.map((word) => {
      const value = staticValue(word);
      return value !== null && [...replaced].some((r) => value.includes(r)) ? RUNTIME_ARGUMENT : word;
    });
    // xargs and parallel append what they read to the command.
    if (name === "xargs" || name === "parallel") filled.push(RUNTIME_ARGUMENT);
    readings.push({ command: filled, allow: false, via: "its run-time arguments", final: true });
    const runs = filled.findIndex((word, i) =>
      word === RUNTIME_ARGUMENT && i < words.length &&
      (EXEC_OPTIONS.has(staticValue(words[i - 1]!) ?? "") ||
        (name === "xargs" && i === xargsCommandAt(words)))
    );
    if (runs >= 0) readings.push({ opaque: "the program it runs is only known at run time" });
  }
  for (const word of nested ? [] : words.slice(1)) {
    const value = staticValue(word);
    if (value !== null && /\s/.test(value.trim())) readings.push({ script: value, allow: false, via: name });
  }
  return readings;
}

/** Where xargs's command starts: after its options (and their values). */
function xargsCommandAt(words: readonly Word[]): number {
  const valued = new Set(["-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a", "--max-args", "--max-procs"]);
  let i = 1;
  while (i < words.length) {
    const value = staticValue(words[i]!);
    if (value === null || !value.startsWith("-") || value === "-") break;
    i += valued.has(value) ? 2 : 1;
  }
  return i;
}

/** The placeholders a wrapper replaces with run-time values (`{}`, or xargs -I's string). */
function replaceStrings(name: string, words: readonly Word[]): Set<string> {
  const found = new Set<string>();
  if (name === "find" || name === "parallel") found.add("{}");
  if (name !== "xargs") return found;
  for (let i = 1; i < words.length; i++) {
    const value = staticValue(words[i]!);
    if (value === null || !value.startsWith("-")) break;
    if (value === "-i" || value === "--replace") found.add("{}");
    else if (value === "-I") {
      const next = staticValue(words[i + 1] ?? DYNAMIC);
      if (next) found.add(next);
      i++;
    } else if (/^-I./.test(value)) found.add(value.slice(2));
    else if (/^(-i|--replace=)./.test(value)) found.add(value.replace(/^(-i|--replace=)/, ""));
  }
  return found;
}
