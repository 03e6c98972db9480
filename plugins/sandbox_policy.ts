/**
 * The OS sandbox of a plugin process (DESIGN §10, issue 11): only what was granted exists inside. Visible:
 * the plugin's own real directory (or module file), the directory of the deno binary, the granted read
 * roots and `run` programs, and what a program needs to start (/usr, /lib*, loader files of /etc);
 * writable: the granted write roots; network: only when granted (a host list is then enforced by Deno's
 * `--allow-net`); environment: the granted variables plus what the Deno runtime needs. A symlink the plugin
 * ships (`root -> /`) points at nothing inside, whatever Deno's path-as-written checks allow.
 *
 * Grants are given to Deno as real paths: the sandbox binds each at its real path, so a grant written
 * through a symlink must name, for Deno too, the place where it exists inside.
 */
import { dirname, resolve } from "node:path";
import type { SandboxPolicy } from "../runtime/sandbox/sandbox.ts";
import type { Permissions } from "./permissions.ts";

/** `granted` with its read and write paths resolved against the job directory to real paths. */
export function realPathGrant(granted: Permissions, jobDir: string): Permissions {
  const real = (item: string) => {
    const absolute = resolve(jobDir, item);
    try {
      return Deno.realPathSync(absolute);
    } catch {
      return absolute; // missing: nothing to bind, and Deno finds nothing there either
    }
  };
  const out: Permissions = { ...granted };
  if (Array.isArray(granted.read)) out.read = granted.read.map(real);
  if (Array.isArray(granted.write)) out.write = granted.write.map(real);
  return out;
}

/** The sandbox policy of one plugin process; `granted` as realPathGrant and resolveRunGrant made it. */
export function pluginPolicy(
  granted: Permissions,
  options: { root: string; deno_path: string; env: Record<string, string>; job_dir: string },
): SandboxPolicy {
  const list = (grant: boolean | readonly string[] | undefined) => Array.isArray(grant) ? grant : [];
  const denoDir = dirname(Deno.realPathSync(options.deno_path));
  const net = granted.net === true ? true : list(granted.net).length ? list(granted.net) : false;
  return {
    // read: true asks for the whole host; anything less shows only what is listed.
    visible: granted.read === true ? "all" : "only_granted",
    read: [options.root, denoDir, ...list(granted.read), ...list(granted.run)],
    write: granted.write === true ? ["/"] : list(granted.write),
    net,
    env: options.env,
    // It works in the job directory, as without the sandbox (relative paths in grants and in plugin code
    // mean the same), but that directory is shown empty: only the grants below it appear.
    hide: [options.job_dir],
    cwd: options.job_dir,
  };
}
