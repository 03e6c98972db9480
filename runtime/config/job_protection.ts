/**
 * Which paths a job held to `protect` may not write (runtime/core/protected_paths.ts; docs/sandbox.md
 * "What an untrusted job cannot write"): the `.git` of the repository its directory is in, and of the
 * repositories of its write roots (a linked worktree's git directories too); its job file; the `*.yaml`,
 * `*.yml` and `*.json` files at the top of its directory; and the files it names that Hermes loads or runs
 * (a provider setting naming a file, such as `model.script`, plugin paths, a path-like `approval.command` program or MCP `command`).
 */
import { dirname, resolve } from "../core/path.ts";
import { realPathOrNull } from "../core/fs.ts";
import { type ProtectedPaths, protectsTarget } from "../core/protected_paths.ts";
import { enclosingRepo } from "../sandbox/git_repo.ts";
import type { JobFile } from "./job_schema.ts";
import { settingFiles } from "../providers/registry.ts";

export function jobProtection(spec: JobFile, dir: string, path: string | null): ProtectedPaths {
  const jobDir = realPathOrNull(dir) ?? resolve(dir);
  const paths = new Set<string>();
  const add = (candidate: string) => {
    const real = realPathOrNull(candidate);
    if (real !== null) paths.add(real);
  };
  const at = (value: string) => resolve(dir, value);
  const shell = spec.tools?.shell?.sandbox;
  const writeRoots = [
    dir,
    ...(spec.tools?.write_file?.paths ?? []).map(at),
    ...(shell && shell !== "off" ? shell.write ?? [] : []).map(at),
    ...Object.values(spec.mcp_servers ?? {}).flatMap((entry) =>
      entry.sandbox && entry.sandbox !== "off" ? (entry.sandbox.write ?? []).map(at) : []
    ),
    ...(spec.plugins ?? []).flatMap((plugin) =>
      Array.isArray(plugin.permissions?.write) ? plugin.permissions.write.map(at) : []
    ),
  ];
  for (const root of writeRoots) {
    // A root that does not exist yet is created inside its nearest existing parent's repository.
    let existing = root;
    while (realPathOrNull(existing) === null && dirname(existing) !== existing) existing = dirname(existing);
    const repo = enclosingRepo(realPathOrNull(existing) ?? existing);
    if (repo === null) continue;
    add(`${repo.root}/.git`);
    for (const gitDir of repo.outside) add(gitDir);
  }
  if (path !== null) add(path);
  for (const entry of safeReadDir(jobDir)) {
    if (entry.isFile && /\.(ya?ml|json)$/i.test(entry.name)) add(`${jobDir}/${entry.name}`);
  }
  for (const { value } of settingFiles(spec.model)) add(at(value));
  for (const plugin of spec.plugins ?? []) add(at(plugin.path));
  const program = spec.approval?.command?.[0];
  if (program?.includes("/")) add(at(program));
  for (const entry of Object.values(spec.mcp_servers ?? {})) {
    if (entry.command?.includes("/")) add(resolve(entry.cwd ? at(entry.cwd) : dir, entry.command));
  }
  return { job_dir: jobDir, paths: [...paths] };
}

/** Does `protect` cover `file` (output.file, relative to `dir`)? Judged on its real path. */
export function protectsOutput(file: string, dir: string, protect: ProtectedPaths): boolean {
  return protectsTarget(resolve(dir, file), protect);
}

function safeReadDir(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)];
  } catch {
    return [];
  }
}
