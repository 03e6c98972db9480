/** A job's plugin entry as configuration: its permission names and paths anchored at a directory. */
import { resolve } from "../core/path.ts";
import type { PluginEntry } from "./job_schema.ts";

export type Permissions = NonNullable<PluginEntry["permissions"]>;
export type PermissionName = keyof Permissions;
export const PERMISSION_NAMES: readonly PermissionName[] = [
  "read",
  "write",
  "net",
  "env",
  "run",
  "ffi",
  "sys",
];

/** Permissions whose list items are file-system paths (resolved against the job directory). */
export const PATH_PERMISSIONS: ReadonlySet<PermissionName> = new Set<PermissionName>([
  "read",
  "write",
  "ffi",
]);

/**
 * `entry` with its relative paths (the plugin path, read/write/ffi grants) made absolute against `dir`.
 * Global plugins from HERMES_HOME/config.yaml are relative to HERMES_HOME, not to the job that adds them.
 */
export function entryRelativeTo(entry: PluginEntry, dir: string): PluginEntry {
  const resolved: PluginEntry = { ...entry, path: resolve(dir, entry.path) };
  if (entry.permissions) {
    const permissions: Permissions = { ...entry.permissions };
    for (const name of PATH_PERMISSIONS) {
      const grant = permissions[name];
      if (Array.isArray(grant)) permissions[name] = grant.map((item) => resolve(dir, item));
    }
    resolved.permissions = permissions;
  }
  return resolved;
}
