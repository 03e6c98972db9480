/** File-system questions the program asks in several places. */

/**
 * True when something is at `path`; a symbolic link counts as itself (a dangling one too: it is not
 * followed). A path that cannot be examined (missing, not a directory, no permission) does not exist.
 */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * `exists` for synchronous callers (policy building, job checks). `follow: true` asks about what a final
 * symbolic link points at, so a dangling link does not exist.
 */
export function existsSync(path: string, options: { follow?: boolean } = {}): boolean {
  try {
    options.follow ? Deno.statSync(path) : Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The real path of `path`, or null when it cannot be resolved (missing, a dangling link, no permission). */
export function realPathOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/** The text of the file at `path`, or null when it cannot be read (missing, not a file, no permission). */
export function readTextOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}
