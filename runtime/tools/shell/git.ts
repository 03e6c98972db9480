/**
 * git's command line as tools.shell needs to read it: `git [global options] <command> [args]`.
 *
 * - Global options (git.c `handle_options`): flags such as `--no-pager`, `-P`, `--bare`; `-C <dir>` and
 *   `-c <key>=<value>` with a separate value; `--git-dir`, `--work-tree`, `--namespace`, `--config-env`,
 *   `--attr-source`, `--super-prefix`, `--shallow-file` with `=value` or a separate value; `--exec-path`
 *   and `--list-cmds` with `=value` only. `-h`/`--help` and `-v`/`--version` end them. Anything else that
 *   starts with `-` is unknown: git refuses it, but a newer git might not, so the line is opaque.
 * - The command: `git-push` (dashed) is `git push`; `send-pack`, `http-push` and the remote helpers
 *   (`remote-https`, …) push, and `subtree push` runs `git push`: all are also read as `git push`.
 * - Aliases: `-c alias.X=…` defines X (`!cmd` runs a shell command). A command git does not know may be
 *   an alias from a config file or a `git-X` program on PATH: opaque.
 * - Commands git runs: values of `-c` keys such as core.sshCommand, core.fsmonitor, diff.external,
 *   filter.*.clean; options such as `rebase -x`, `--upload-pack`, `--receive-pack`, `--exec`,
 *   `filter-branch --tree-filter`; `submodule foreach`; `bisect run`; `git config KEY VALUE` writing such
 *   a key. Keys naming files, repositories or URLs whose contents run or configure (core.hooksPath,
 *   include.path, init.templateDir, remote.*.vcs, url.*.insteadOf, protocol.*.allow for ext::) are opaque,
 *   as are `--git-dir` and `--work-tree` (a planted repository's config).
 *
 * What no reading of the line can see: aliases, hooks, filters and helpers already in config files or the
 * repository (`git commit` runs `.git/hooks/pre-commit`), and what those programs do. Every command runs
 * with settings that switch the fixed-name ones off and ignore planted global config (git_env.ts).
 */
import { parseShell, staticValue, type Word } from "./parse.ts";
import { baseName, literalWord, type Reading } from "./readings.ts";

const FLAGS = new Set([
  "-p",
  "--paginate",
  "-P",
  "--no-pager",
  "--no-replace-objects",
  "--no-lazy-fetch",
  "--no-optional-locks",
  "--no-advice",
  "--bare",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--exec-path",
  "--html-path",
  "--man-path",
  "--info-path",
]);
/** Value in the next word only. */
const SEPARATE = new Set(["-C", "-c"]);
/** Value after `=` or in the next word. */
const VALUED = new Set([
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--super-prefix",
  "--config-env",
  "--attr-source",
  "--shallow-file",
]);
/** Value after `=` only. */
const EQUALS_ONLY = new Set(["--exec-path", "--list-cmds"]);
const ENDING: Record<string, string> = {
  "-h": "help",
  "--help": "help",
  "-v": "version",
  "--version": "version",
};

/** Commands that push under another name. */
const PUSHES = /^(send-pack|http-push|remote-[a-z0-9+.-]+)$/;

/** `-c` keys whose value is a command git runs (lower-case; `*` is one subsection). */
const COMMAND_KEYS = new RegExp(
  "^(core\\.(editor|sshcommand|fsmonitor|askpass|gitproxy|alternaterefscommand)|sequence\\.editor|" +
    "diff\\.external|gpg\\.ssh\\.defaultkeycommand|trailer\\.[^.]+\\.(command|cmd)|" +
    "diff\\.[^.]+\\.(command|textconv)|merge\\.[^.]+\\.driver|filter\\.[^.]+\\.(clean|smudge|process)|" +
    "credential(\\..+)?\\.helper|gpg(\\.[^.]+)?\\.program|uploadpack\\.packobjectshook|" +
    "remote\\.[^.]+\\.(uploadpack|receivepack)|sendemail\\.(sendmailcmd|tocmd|cccmd|smtpserver)|" +
    "(mergetool|difftool|guitool|man|browser)\\.[^.]+\\.(cmd|path)|interactive\\.difffilter)$",
);
/** Pagers run only on a terminal: their commands are checked against deny only. */
const PAGER_KEYS = /^(core\.pager|pager\.[^.]+)$/;
/**
 * `-c` keys that bring in commands from files, other repositories or URLs (`ext::cmd`): hooks, included
 * files, templates (with hooks), remote helpers (`remote.X.vcs` runs `git-remote-X`), rewritten URLs, another
 * work tree.
 */
const OPAQUE_KEYS = new RegExp(
  "^(core\\.(hookspath|worktree)|include\\.path|includeif\\..+\\.path|protocol(\\..+)?\\.allow|" +
    "init\\.templatedir|remote\\.[^.]+\\.vcs|url\\..+\\.(insteadof|pushinsteadof))$",
);
/** `submodule.X.update=!cmd` runs cmd on `git submodule update`; its other values name a strategy. */
const SUBMODULE_UPDATE = /^submodule\..+\.update$/;
const BOOLEAN = /^(true|false|yes|no|on|off|1|0)$/i;

/** Per command: options whose value is a shell command. */
const COMMAND_OPTIONS: Record<string, readonly string[]> = {
  rebase: ["-x", "--exec"],
  "ls-remote": ["-u", "--upload-pack"],
  clone: ["-u", "--upload-pack"],
  fetch: ["--upload-pack"],
  pull: ["--upload-pack"],
  "fetch-pack": ["--upload-pack", "--exec"],
  push: ["--receive-pack", "--exec"],
  "send-pack": ["--receive-pack", "--exec"],
  archive: ["--exec"],
  difftool: ["-x", "--extcmd"],
  instaweb: ["-d", "--httpd", "-b", "--browser"],
  "send-email": ["--sendmail-cmd", "--to-cmd", "--cc-cmd", "--smtp-server"],
  "filter-branch": [
    "--setup",
    "--env-filter",
    "--tree-filter",
    "--index-filter",
    "--parent-filter",
    "--msg-filter",
    "--commit-filter",
    "--tag-name-filter",
  ],
};

/** git's commands (`git --list-cmds=main,others` of 2.39 and later releases, and the usual extras). */
const COMMANDS = new Set(
  ("add am annotate apply archimport archive backfill bisect blame branch bugreport bundle cat-file " +
    "check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick " +
    "citool clean clone column commit commit-graph commit-tree config count-objects credential " +
    "credential-cache credential-store cvsexportcommit cvsimport cvsserver daemon describe diagnose diff " +
    "diff-files diff-index diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack " +
    "filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects " +
    "fsmonitor--daemon gc get-tar-commit-id grep gui hash-object help hook http-backend http-fetch " +
    "http-push imap-send index-pack init init-db instaweb interpret-trailers last-modified log ls-files " +
    "ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index " +
    "merge-octopus merge-one-file merge-ours merge-recursive merge-resolve merge-subtree merge-tree " +
    "mergetool mktag mktree multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs " +
    "patch-id prune prune-packed pull push quiltimport range-diff read-tree rebase receive-pack reflog " +
    "refs remote repack replace replay repo request-pull rerere reset restore rev-list rev-parse revert " +
    "rm send-email send-pack shell shortlog show show-branch show-index show-ref sparse-checkout stage " +
    "stash status stripspace submodule subtree svn switch symbolic-ref tag unpack-file unpack-objects " +
    "update-index update-ref update-server-info upload-archive upload-pack var verify-commit " +
    "verify-pack verify-tag version whatchanged worktree write-tree").split(" "),
);

interface Parsed {
  globals: Word[];
  /** `-c` settings, lower-cased key and value; null for a dynamic word. */
  config: ({ key: string; value: string } | null)[];
  opaque: string[];
  command?: { name: string | null; at: number };
}

export function gitReadings(words: readonly Word[]): Reading[] {
  const head = baseName(staticValue(words[0]!)!);
  if (head !== "git") {
    // `git-push …` is `git push …`.
    const dashed = [literalWord("git"), literalWord(head.slice(4)), ...words.slice(1)];
    return [{ command: dashed, allow: false, via: "git" }];
  }
  const parsed = parseGlobals(words);
  const readings: Reading[] = parsed.opaque.map((opaque) => ({ opaque }));
  for (const setting of parsed.config) {
    if (setting === null) readings.push({ opaque: "a -c setting only known at run time" });
    else readings.push(...settingReadings(setting.key, setting.value));
  }
  const command = parsed.command;
  if (!command) return readings;
  const rest = words.slice(command.at + 1);
  const git = words[0]!;
  if (command.name === null) return readings; // dynamic: the line as written already matches any deny
  const name = command.name;
  if (parsed.globals.length > 0) {
    readings.push({
      command: [git, ...words.slice(command.at)],
      allow: false,
      via: "git's global options",
      final: true,
    });
  }
  if (PUSHES.test(name)) {
    readings.push({ command: [git, literalWord("push"), ...rest], allow: false, via: name });
  }
  if (name === "subtree" && rest[0] && staticValue(rest[0]) === "push") {
    readings.push({
      command: [git, literalWord("push"), ...rest.slice(1)],
      allow: false,
      via: "subtree push",
    });
  }
  const alias = parsed.config.findLast((s) => s?.key === `alias.${name.toLowerCase()}`);
  if (alias) readings.push(aliasReading(alias.value, [git, ...parsed.globals], rest));
  else if (!COMMANDS.has(name)) {
    readings.push({
      opaque: `"git ${name}" is not a git command, so an alias or a git-${name} program whose commands ` +
        "are not shown",
    });
  }
  readings.push(...optionPayloads(name, rest));
  if (name === "config") readings.push(...configWrites(rest));
  return readings;
}

/** Options of `git config` that take a value in the next word. */
const CONFIG_VALUED = new Set(["-f", "--file", "--blob", "--type", "--default", "--comment", "--value"]);

/**
 * `git config [--file F] KEY VALUE` (also `set KEY VALUE`, `--add`, `--replace-all`) writes a setting a later
 * git command runs: the value is read as if it were given with `-c` now.
 */
function configWrites(rest: readonly Word[]): Reading[] {
  const args: (string | null)[] = [];
  for (let i = 0; i < rest.length; i++) {
    const value = staticValue(rest[i]!);
    if (args.length === 0 && value !== null && (value.startsWith("-") || value === "set")) {
      if (CONFIG_VALUED.has(value)) i++;
      continue;
    }
    args.push(value);
  }
  const [key, value] = args;
  if (key === undefined || value === undefined) return [];
  if (key === null) return [{ opaque: "git config writes a setting only known at run time" }];
  const lower = key.toLowerCase();
  if (value === null) {
    const runs = lower.startsWith("alias.") || settingReadings(lower, "x").length > 0;
    return runs ? [{ opaque: `git config writes ${key} with a value only known at run time` }] : [];
  }
  if (lower.startsWith("alias.") && value.startsWith("!")) {
    return [{ script: value.slice(1), allow: true, via: `git config ${key}` }];
  }
  return settingReadings(lower, value).map((reading) =>
    "via" in reading ? { ...reading, via: `git config ${key}` } : reading
  );
}

function parseGlobals(words: readonly Word[]): Parsed {
  const parsed: Parsed = { globals: [], config: [], opaque: [] };
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    const value = staticValue(word);
    if (value === null) {
      // An option or the command: the line as written matches any deny the command could.
      parsed.opaque.push("a global option or the command is only known at run time");
      parsed.command = { name: null, at: i };
      return parsed;
    }
    if (!value.startsWith("-")) {
      parsed.command = { name: value, at: i };
      return parsed;
    }
    const ending = ENDING[value];
    if (ending) {
      parsed.command = { name: ending, at: i };
      return parsed;
    }
    const [option, ...assigned] = value.split("=");
    const inline = assigned.length > 0 ? assigned.join("=") : null;
    parsed.globals.push(word);
    if (inline === null && SEPARATE.has(option!) || inline === null && VALUED.has(option!)) {
      const next = words[++i];
      if (!next) return parsed;
      parsed.globals.push(next);
      recordValue(parsed, option!, staticValue(next));
    } else if (inline !== null && (VALUED.has(option!) || EQUALS_ONLY.has(option!))) {
      recordValue(parsed, option!, inline);
    } else if (inline !== null || !FLAGS.has(value)) {
      parsed.opaque.push(`git does not know the global option ${value}`);
    }
  }
  return parsed;
}

function recordValue(parsed: Parsed, option: string, value: string | null): void {
  if (option === "-c") {
    if (value === null) parsed.config.push(null);
    else {
      const at = value.indexOf("=");
      const key = (at < 0 ? value : value.slice(0, at)).toLowerCase();
      parsed.config.push({ key, value: at < 0 ? "true" : value.slice(at + 1) });
    }
  } else if (option === "--config-env") {
    const key = (value ?? "").split("=")[0]!.toLowerCase();
    if (value === null || key.startsWith("alias.") || settingReadings(key, "x").length > 0) {
      parsed.opaque.push(`--config-env takes ${key || "a setting"} from the environment`);
    }
  } else if (option === "--exec-path") {
    parsed.opaque.push("--exec-path makes git run its programs from another directory");
  } else if (option === "--git-dir" || option === "--work-tree") {
    parsed.opaque.push(`${option} points git at a repository, and its configuration, the line does not show`);
  }
}

function settingReadings(key: string, value: string): Reading[] {
  if (OPAQUE_KEYS.test(key)) return [{ opaque: `-c ${key} brings in commands from elsewhere` }];
  if (SUBMODULE_UPDATE.test(key)) {
    return value.startsWith("!") ? [{ script: value.slice(1), allow: true, via: `-c ${key}` }] : [];
  }
  const pager = PAGER_KEYS.test(key);
  if (!pager && !COMMAND_KEYS.test(key)) return [];
  if (key === "core.fsmonitor" && BOOLEAN.test(value)) return [];
  const script = value.startsWith("!") ? value.slice(1) : value;
  if (script.trim() === "") return [];
  // `credential.helper=store` is `git credential-store`.
  if (/helper$/.test(key) && /^[a-z][a-z0-9-]*( |$)/.test(script) && !value.startsWith("!")) {
    return [{ script: `git credential-${script}`, allow: true, via: `-c ${key}` }];
  }
  return [{ script, allow: !pager, via: `-c ${key}` }];
}

/** `alias.X=!cmd` runs `cmd "$@"` with sh; `alias.X=words` runs `git words "$@"` with the same options. */
function aliasReading(value: string, prefix: Word[], rest: readonly Word[]): Reading {
  if (value.startsWith("!")) {
    const args = rest.map((word) => word.raw).join(" ");
    return { script: `${value.slice(1)} ${args}`, allow: true, via: "a -c alias" };
  }
  const parsed = parseShell(value);
  const only = parsed.ok && parsed.commands.length === 1 ? parsed.commands[0]! : null;
  if (!only || only.redirects.length > 0 || only.assignments.length > 0 || only.words.length === 0) {
    return { opaque: `the -c alias "${value}" cannot be read` };
  }
  return { command: [...prefix, ...only.words, ...rest], allow: true, via: "a -c alias" };
}

/** Commands given to a git command through its own options and arguments. */
function optionPayloads(name: string, rest: readonly Word[]): Reading[] {
  const readings: Reading[] = [];
  const options = COMMAND_OPTIONS[name] ?? [];
  for (let i = 0; i < rest.length; i++) {
    const value = staticValue(rest[i]!);
    if (value === null) continue;
    const option = options.find((o) => value === o || value.startsWith(`${o}=`) || shortJoined(o, value));
    if (!option) continue;
    let payload: string | null;
    if (value === option) payload = rest[i + 1] ? staticValue(rest[++i]!) : null;
    else payload = value.slice(option.length + (value[option.length] === "=" ? 1 : 0));
    if (payload === null) {
      readings.push({ opaque: `the command given to git ${name} ${option} is only known at run time` });
    } else readings.push({ script: payload, allow: true, via: `git ${name} ${option}` });
  }
  const [first, ...after] = rest.map(staticValue);
  if (name === "submodule") {
    const at = rest.findIndex((word) => staticValue(word) === "foreach");
    if (at >= 0) {
      const args = rest.slice(at + 1).map(staticValue);
      const start = args.findIndex((arg) => arg === null || !arg.startsWith("--"));
      const script = args.slice(start < 0 ? args.length : start);
      if (script.some((arg) => arg === null)) readings.push({ opaque: "the command of submodule foreach" });
      else if (script.length > 0) {
        readings.push({ script: script.join(" "), allow: true, via: "submodule foreach" });
      }
    }
  }
  if (name === "bisect" && first === "run" && after.length > 0) {
    readings.push({ command: rest.slice(1), allow: true, via: "bisect run" });
  }
  return readings;
}

/** `-xcmd` for a short option `-x`. */
function shortJoined(option: string, value: string): boolean {
  return option.length === 2 && value.length > 2 && value.startsWith(option);
}
