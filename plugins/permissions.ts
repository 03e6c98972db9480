/**
 * Plugin permissions (docs/plugins.md): what a plugin requests in plugin.json must be covered by what the job
 * grants, and the grant becomes the plugin subprocess's `--allow-*` flags and environment.
 */
import { dirname, resolve } from "../runtime/core/path.ts";
import {
  PATH_PERMISSIONS,
  PERMISSION_NAMES,
  type PermissionName,
  type Permissions,
} from "../runtime/config/plugin_entry.ts";

export {
  entryRelativeTo,
  PERMISSION_NAMES,
  type PermissionName,
  type Permissions,
} from "../runtime/config/plugin_entry.ts";

function resolveItem(name: PermissionName, item: string, jobDir: string): string {
  return PATH_PERMISSIONS.has(name) ? resolve(jobDir, item) : item;
}

function covers(name: PermissionName, granted: string, requested: string): boolean {
  if (granted === requested) return true;
  if (PATH_PERMISSIONS.has(name)) {
    return requested.startsWith(granted.endsWith("/") ? granted : `${granted}/`);
  }
  // A granted host without a port covers every port of that host.
  return name === "net" && !granted.includes(":") && requested.startsWith(`${granted}:`);
}

/**
 * The requested permissions the grant does not cover, one entry per missing item (`read ./notes`,
 * `net api.example.com:443`, `run (any)`). Requested paths are resolved against the job directory, like
 * granted ones, so `read: ["./notes"]` on both sides matches.
 */
export function missingGrants(requested: Permissions, granted: Permissions, jobDir: string): string[] {
  const missing: string[] = [];
  for (const name of PERMISSION_NAMES) {
    const want = requested[name];
    const have = granted[name];
    if (!want || have === true) continue;
    if (want === true) {
      missing.push(`${name} (any)`);
      continue;
    }
    const haveItems = (have || []).map((item) => resolveItem(name, item, jobDir));
    for (const item of want) {
      const wanted = resolveItem(name, item, jobDir);
      if (!haveItems.some((h) => covers(name, h, wanted))) missing.push(`${name} ${item}`);
    }
  }
  return missing;
}

/** The grant with its path lists (`read`, `write`, `ffi`) resolved against the job directory. */
export function absoluteGrant(granted: Permissions, jobDir: string): Permissions {
  const out: Permissions = { ...granted };
  for (const name of PATH_PERMISSIONS) {
    const grant = granted[name];
    if (Array.isArray(grant)) out[name] = grant.map((item) => resolveItem(name, item, jobDir));
  }
  return out;
}

/**
 * `--allow-*` flags for a grant: `false`/absent/empty → no flag, `true` → the bare flag, a list →
 * comma-joined values. The plugin's own root (its directory, or its single module file) is always readable.
 */
export function permissionFlags(granted: Permissions, options: { root: string; job_dir: string }): string[] {
  const flags: string[] = [];
  for (const name of PERMISSION_NAMES) {
    const grant = granted[name];
    const items = grant === true || grant === false || grant === undefined ? [] : grant;
    for (const item of items) {
      if (item.includes(",")) {
        throw new RangeError(`Cannot grant ${name} "${item}": a value may not contain a comma`);
      }
      if (item.trim() === "") throw new RangeError(`Cannot grant ${name} "": expected a non-empty value`);
    }
    const values = items.map((item) => resolveItem(name, item, options.job_dir));
    if (name === "read" && grant !== true) values.unshift(options.root);
    if (grant === true) flags.push(`--allow-${name}`);
    else if (values.length > 0) flags.push(`--allow-${name}=${values.join(",")}`);
  }
  return flags;
}

/**
 * The plugin's environment: only the granted variables (all of them for `env: true`) — plus, when it may
 * run programs, a PATH to find them: the directories of its resolved `run` programs (`run: true`: the host's
 * PATH). Deno resolves a bare program name against PATH, at start for `--allow-run=` and at each spawn.
 */
export function grantedEnv(granted: Permissions, env: Record<string, string>): Record<string, string> {
  const grant = granted.env;
  const given = grant === true ? { ...env } : Object.fromEntries(
    (grant || []).filter((name) => env[name] !== undefined).map((name) => [name, env[name]!]),
  );
  if (given.PATH !== undefined || !granted.run) return given;
  const path = granted.run === true
    ? env.PATH
    : [...new Set(granted.run.filter((p) => p.startsWith("/")).map((p) => dirname(p)))].join(":");
  return path ? { ...given, PATH: path } : given;
}

/**
 * The grant with its `run` program names made absolute: a name with a slash against the job directory, a
 * bare name on the host's PATH (checked at load, so a missing program is a load error naming it).
 */
export function resolveRunGrant(
  granted: Permissions,
  options: { job_dir: string; path: string | undefined },
): Permissions {
  if (!Array.isArray(granted.run)) return granted;
  return { ...granted, run: granted.run.map((name) => resolveProgram(name, options)) };
}

function resolveProgram(name: string, options: { job_dir: string; path: string | undefined }): string {
  if (name.includes("/")) return resolve(options.job_dir, name);
  const dirs = (options.path ?? "").split(":").filter((dir) => dir.startsWith("/"));
  for (const dir of dirs) {
    try {
      const info = Deno.statSync(`${dir}/${name}`);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return `${dir}/${name}`;
    } catch { /* not in this directory */ }
  }
  throw new RangeError(`Cannot grant run "${name}": no such program on PATH (${dirs.join(":") || "empty"})`);
}

/** A grant written as the permissions requested (for `hermes plugins check`). */
export function describeGrant(granted: Permissions): string {
  const parts = PERMISSION_NAMES.flatMap((name) => {
    const grant = granted[name];
    if (grant === true) return [`${name}: all`];
    if (!grant || grant.length === 0) return [];
    return [`${name}: ${grant.join(", ")}`];
  });
  return parts.length ? parts.join("; ") : "none";
}
