/**
 * GitHub Actions reads every line a step prints as a possible workflow command: a line that starts with `::`
 * (after leading whitespace: `::error::`, `::add-mask::`, `::stop-commands::`) and, in the older form, a line
 * holding `##[command]` anywhere. Under `GITHUB_ACTIONS=true` each line Hermes prints on stderr goes through
 * {@linkcode inertLine}, so text that tool output or the model chose (a denial reason, an error, a progress
 * line) can never become one; Hermes's own annotations are written apart, their values escaped with
 * {@linkcode escapeData} and {@linkcode escapeProperty} as GitHub's toolkit escapes them.
 */

/** A command's data (after the second `::`): `%`, CR and LF as `%25`, `%0D`, `%0A` (actions/toolkit). */
export function escapeData(text: string): string {
  return text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/** A command's property value (`file=…,title=…`): the data escapes, and `:` and `,` too. */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

/**
 * `line` as one line the runner does not act on: its line breaks escaped as in command data, a leading `::`
 * (after any whitespace) as `%3A%3A`, and each `##[` as `##%5B`.
 */
export function inertLine(line: string): string {
  return escapeData(line).replace(/^(\s*)::/, "$1%3A%3A").replaceAll("##[", "##%5B");
}
