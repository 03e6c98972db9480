/**
 * The files a job held to `protect` (`--untrusted`, a policy's `protect_job`) may not write, whatever
 * grants it: what would make the host run code later — its repository's `.git` (hooks, `core.fsmonitor`),
 * its own job file and the other job files and configuration at the top of its directory (which a later,
 * trusted run would load), and the files it names that Hermes loads or runs. Computed at config loading
 * (runtime/config/job_protection.ts); held by write_file and output.file on the file actually opened, and by
 * read-only binds in every OS sandbox (runtime/sandbox/policy.ts).
 */
import { dirname } from "./path.ts";
import { realPathOrNull } from "./fs.ts";

export interface ProtectedPaths {
  /** The job directory's real path: new `*.yaml`, `*.yml` and `*.json` files at its top are protected too. */
  job_dir: string;
  /** Real paths protected with everything below them (existing ones; the sandbox binds these read-only). */
  paths: string[];
}

const TOP_LEVEL_CONFIG = /\.(ya?ml|json)$/i;

/** Is the real path `real` one a protected job may not write? */
export function isProtected(real: string, protect: ProtectedPaths): boolean {
  if (protect.paths.some((path) => real === path || real.startsWith(`${path}/`))) return true;
  const slash = real.lastIndexOf("/");
  return real.slice(0, slash) === protect.job_dir && TOP_LEVEL_CONFIG.test(real.slice(slash + 1));
}

/**
 * `isProtected` of what the absolute path `absolute` names: the real path of its nearest existing parent with
 * the rest appended (a symlinked directory on the way counts as where it leads).
 */
export function protectsTarget(absolute: string, protect: ProtectedPaths): boolean {
  const rest: string[] = [];
  for (let head = absolute;;) {
    const real = realPathOrNull(head);
    if (real !== null) {
      return isProtected(rest.length ? `${real === "/" ? "" : real}/${rest.join("/")}` : real, protect);
    }
    const parent = dirname(head);
    if (parent === head) return isProtected(absolute, protect);
    rest.unshift(head.slice(parent === "/" ? 1 : parent.length + 1));
    head = parent;
  }
}

/** A path with a `.git` component (any case): git's directory, whose config and hooks run programs. */
export function insideGit(path: string): boolean {
  return path.split("/").some((part) => part.toLowerCase() === ".git");
}
