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
