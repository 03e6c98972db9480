/**
 * Resolving a plugin path (docs/plugins.md): a directory with `plugin.json`, or a single module file.
 */
import { basename, dirname, resolve } from "../runtime/core/path.ts";
import { z } from "zod";
import { errorMessage, ValidationError } from "../runtime/core/errors.ts";
import { PluginEntry } from "../runtime/config/job_schema.ts";
import type { Permissions } from "./permissions.ts";

const PLUGIN_NAME = /^[a-z0-9][a-z0-9._-]*$/;
const MODULE_FILE = /\.(ts|mts|js|mjs|tsx|jsx)$/;

const PluginJson = z.strictObject({
  name: z.string().regex(PLUGIN_NAME, "expected lower-case letters, digits, '.', '_' or '-'"),
  version: z.string().min(1),
  entry: z.string().min(1),
  description: z.string().optional(),
  permissions: PluginEntry.shape.permissions,
  config_schema: z.record(z.string(), z.unknown()).optional(),
});

export interface PluginManifest {
  name: string;
  version: string;
  description: string;
  /** Everything the plugin may load: its directory (real path), or its module file for a single-file plugin. */
  root: string;
  /** Real path of the entry module. */
  entry: string;
  /** What plugin.json asks for; nothing for a single-file plugin. */
  requested: Permissions;
  config_schema?: Record<string, unknown>;
}

/** Reads the plugin at `path` (resolved against `jobDir`). Throws ValidationError naming the path. */
export async function readManifest(path: string, jobDir: string): Promise<PluginManifest> {
  const fail = (why: string): never => {
    throw new ValidationError(`Cannot load plugin "${path}": ${why}`);
  };
  const absolute = resolve(jobDir, path);
  const stat = await Deno.stat(absolute).catch((error) =>
    fail(
      error instanceof Deno.errors.NotFound ? `no such file or directory (${absolute})` : errorMessage(error),
    )
  );
  const real = await Deno.realPath(absolute);
  if (stat.isFile) {
    if (!MODULE_FILE.test(real)) fail("expected a directory with plugin.json or a .ts/.js module");
    const name = singleFileName(real, 0);
    if (!PLUGIN_NAME.test(name)) fail(`the file name does not make a valid plugin name ("${name}")`);
    return { name, version: "0.0.0", description: "", root: real, entry: real, requested: {} };
  }
  const jsonPath = `${real}/plugin.json`;
  let raw: unknown;
  try {
    raw = JSON.parse(await Deno.readTextFile(jsonPath));
  } catch (error) {
    fail(
      error instanceof Deno.errors.NotFound
        ? "the directory has no plugin.json"
        : `${jsonPath}: ${errorMessage(error)}`,
    );
  }
  const parsed = PluginJson.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    fail(`${jsonPath}: ${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`);
  }
  const manifest = parsed.data!;
  const entryPath = resolve(real, manifest.entry);
  const entry = await Deno.realPath(entryPath).catch(() =>
    fail(`${jsonPath}: entry "${manifest.entry}" does not exist`)
  );
  if (!entry.startsWith(`${real}/`)) {
    fail(`${jsonPath}: entry "${manifest.entry}" is outside the plugin directory`);
  }
  if (!MODULE_FILE.test(entry)) fail(`${jsonPath}: entry "${manifest.entry}" is not a .ts/.js module`);
  const result: PluginManifest = {
    name: manifest.name,
    version: manifest.version,
    description: manifest.description ?? "",
    root: real,
    entry,
    requested: manifest.permissions ?? {},
  };
  if (manifest.config_schema) result.config_schema = manifest.config_schema;
  return result;
}

// Entry names that say nothing about the plugin (Deno's `mod.ts` convention): the directory names it.
const GENERIC_STEM = /^(mod|index|main|plugin)$/;

/**
 * The name of a single-file plugin: its file name without extension (`memory.ts` → memory), or its
 * directory's for a generic one (`a/mod.ts` → a); `depth` more parent directories qualify it (`b.memory`).
 */
function singleFileName(real: string, depth: number): string {
  const stem = basename(real).replace(MODULE_FILE, "").toLowerCase();
  let dir = dirname(real);
  const parts = [stem];
  if (GENERIC_STEM.test(stem) && dir !== "/") (parts[0] = basename(dir).toLowerCase(), dir = dirname(dir));
  for (let i = 0; i < depth && dir !== "/"; i++, dir = dirname(dir)) {
    parts.unshift(basename(dir).toLowerCase());
  }
  return parts.map((part) => part.replace(/[^a-z0-9._-]/g, "-")).join(".");
}

/**
 * Single-file plugins whose derived names collide (`a/memory.ts`, `b/memory.ts`) are named by as many parent
 * directories as makes them distinct (a.memory, b.memory). Names from plugin.json, and the same file listed
 * twice, are left alone: registering those twice is refused.
 */
export function distinctNames(manifests: readonly PluginManifest[]): PluginManifest[] {
  const result = manifests.map((m) => ({ ...m }));
  const single = result.filter((m) => m.root === m.entry);
  for (let depth = 1; depth < 64; depth++) {
    const clashing = single.filter((m) =>
      result.some((other) => other !== m && other.name === m.name && other.entry !== m.entry)
    );
    if (clashing.length === 0) break;
    for (const m of clashing) m.name = singleFileName(m.entry, depth);
  }
  return result;
}
