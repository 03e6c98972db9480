/** Notices edits to a daemon's job files: one non-recursive watch on each directory involved. */
import { dirname, resolve } from "../../runtime/core/path.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import type { Logger } from "../../runtime/core/log.ts";
import { jobFiles } from "./jobs.ts";

export interface JobWatch {
  /** Stops watching and waits for the watch loop to end. */
  close(): Promise<void>;
}

/** Calls `onChange` whenever a YAML file (or a job file named on the command line) changes under `paths`. */
export function watchJobFiles(paths: readonly string[], onChange: () => void, log: Logger): JobWatch {
  const dirs = new Set<string>();
  for (const given of paths) {
    const path = resolve(given);
    try {
      dirs.add(Deno.statSync(path).isDirectory ? path : dirname(path));
    } catch {
      // gone since start-up; the next reload reports it
    }
  }
  let named = new Set<string>();
  let watcher: Deno.FsWatcher;
  try {
    named = jobFiles(paths).named;
    watcher = Deno.watchFs([...dirs], { recursive: false });
  } catch (error) {
    log.warn(`cannot watch job files (${errorMessage(error)}); edits need a restart`);
    return { close: () => Promise.resolve() };
  }
  const done = (async () => {
    try {
      for await (const event of watcher) {
        if (event.paths.some((p) => /\.ya?ml$/.test(p) || named.has(p))) onChange();
      }
    } catch (error) {
      log.warn(`watching job files failed (${errorMessage(error)}); edits need a restart`);
    }
  })();
  return {
    close: async () => {
      try {
        watcher.close();
      } catch {
        // already closed after a failure
      }
      await done;
    },
  };
}
