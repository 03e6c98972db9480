/**
 * The names of the built-in tools, whether or not a job enables them: a plugin tool may not take one
 * (docs/plugins.md), or a plugin's `shell` would silently replace the built-in and its allow-lists.
 */
export const BUILTIN_TOOL_NAMES: readonly string[] = [
  "shell",
  "read_file",
  "write_file",
  "list_dir",
  "http_fetch",
];
