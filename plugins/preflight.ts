/**
 * Module-graph preflight (docs/plugins.md). Deno loads static imports without checking read permissions, so
 * before a plugin starts, `deno info --json` resolves its whole graph (static, literal dynamic and type
 * imports) and any module outside the plugin's root, or any `npm:`, `jsr:`, `http(s):` or `data:`
 * specifier, refuses the load. `node:` built-ins are allowed: they check permissions at run time.
 */
import { fileURLToPath as fromFileUrl } from "node:url";
import { RunError } from "../runtime/core/errors.ts";
import { RUNTIME_ENV } from "./process.ts";

interface Span {
  start: { line: number; character: number };
}
interface Resolution {
  specifier?: string;
  error?: string;
  span?: Span;
}
interface Dependency {
  specifier: string;
  code?: Resolution;
  type?: Resolution;
}
interface ModuleInfo {
  specifier: string;
  local?: string;
  error?: string;
  dependencies?: Dependency[];
}
interface GraphInfo {
  modules: ModuleInfo[];
  npmPackages?: Record<string, unknown>;
}

export interface PreflightOptions {
  deno_path: string;
  signal?: AbortSignal;
}

/** Resolves the graph of `entry`; returns the reason it is refused, or null when every module is allowed. */
export async function preflight(
  entry: string,
  root: string,
  options: PreflightOptions,
): Promise<string | null> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(options.deno_path, {
      args: ["info", "--json", "--no-config", "--no-npm", "--no-remote", "--no-lock", entry],
      clearEnv: true,
      env: { NO_COLOR: "1", ...RUNTIME_ENV },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      ...(options.signal ? { signal: options.signal } : {}),
    }).output();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.PermissionDenied)) {
      throw error;
    }
    throw new RunError(`Cannot run plugins with deno "${options.deno_path}": ${error.message}`);
  }
  if (!output.success) {
    return `deno info failed: ${oneLine(new TextDecoder().decode(output.stderr)) || `exit ${output.code}`}`;
  }
  const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as GraphInfo;
  const inside = (path: string) => path === root || path.startsWith(`${root}/`);
  const location = (module: ModuleInfo, span: Span | undefined) => {
    const file = module.local ?? module.specifier;
    return span ? `${file}:${span.start.line + 1}:${span.start.character + 1}` : file;
  };
  const outside = `outside the plugin's ${rootKind(root, entry)}`;
  // Imports first: they can name the line that asks for a refused module.
  for (const module of graph.modules) {
    for (const dependency of module.dependencies ?? []) {
      for (const resolution of [dependency.code, dependency.type]) {
        if (!resolution) continue;
        const where = `${location(module, resolution.span)}: import "${dependency.specifier}"`;
        const target = resolution.specifier ?? dependency.specifier;
        const scheme = schemeOf(target);
        if (scheme === "file:" && !inside(fromFileUrl(target))) return `${where} is ${outside}`;
        if (scheme !== "file:" && scheme !== "node:" && scheme !== "") {
          return `${where} is refused (${scheme} module)`;
        }
        if (resolution.error) return `${where} cannot be resolved: ${oneLine(resolution.error)}`;
      }
    }
  }
  for (const module of graph.modules) {
    const scheme = schemeOf(module.specifier);
    if (scheme === "node:") continue;
    if (scheme !== "file:") return `"${module.specifier}" is refused (${scheme} module)`;
    const path = fromFileUrl(module.specifier);
    const real = await realPathOrSelf(path);
    if (!inside(real)) return `${path} (real path ${real}) is ${outside}`;
    if (module.error) return oneLine(module.error);
  }
  if (Object.keys(graph.npmPackages ?? {}).length > 0) return "npm packages are refused";
  return null;
}

function schemeOf(specifier: string): string {
  return /^([a-z][a-z0-9+.-]*:)/i.exec(specifier)?.[1]?.toLowerCase() ?? "";
}

function rootKind(root: string, entry: string): string {
  return root === entry ? "module file (a single-file plugin may not import other modules)" : "directory";
}

async function realPathOrSelf(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

/** `deno info` errors carry a code frame; keep the message and its location on one line. */
export function oneLine(text: string): string {
  const lines = text.split("\n").map((line) => line.trim()).filter(Boolean);
  const at = lines.find((line) => line.startsWith("at "));
  const first = lines[0] ?? "";
  return (at && at !== first ? `${first} (${at})` : first).replaceAll("file://", "");
}
