/**
 * `read_file {path}`, `write_file {path, content}` and `list_dir {path}`, each confined to its roots
 * (paths.ts). Reads are capped at `max_bytes` (default 256KiB), writes refuse content over `max_bytes`
 * (default 1MiB) and create missing parent directories inside the root, listings are capped at
 * `max_entries` (default 1000).
 */
import { dirname } from "node:path";
import { denied, type Tool, type ToolOutcome } from "./tool.ts";
import { type PathScope, resolveInScope } from "./paths.ts";
import { CappedBytes } from "./_capped.ts";

export function readFileTool(scope: PathScope, options: { maxBytes: number }): Tool {
  return {
    spec: {
      name: "read_file",
      description: "Read a text file. Relative paths are resolved against the job directory.",
      parameters: objectSchema({ path: "Path of the file to read" }),
    },
    run: (args) =>
      withPath(scope, args, async (path, requested) => {
        const info = await Deno.stat(path);
        if (info.isDirectory) return error(`Cannot read "${requested}": it is a directory; use list_dir`);
        const content = new CappedBytes(options.maxBytes);
        const file = await Deno.open(path);
        try {
          const buffer = new Uint8Array(64 * 1024);
          for (let n = await file.read(buffer); n !== null; n = await file.read(buffer)) {
            if (content.push(buffer.slice(0, n))) break;
          }
        } finally {
          file.close();
        }
        if (content.bytes.subarray(0, 8192).includes(0)) {
          return { status: "ok", content: `"${requested}" is a binary file (${info.size} bytes); not shown` };
        }
        const text = new TextDecoder().decode(content.bytes);
        if (!content.truncated) return { status: "ok", content: text };
        return {
          status: "ok",
          content: `${text}\n[file truncated at ${options.maxBytes} bytes of ${info.size}]`,
        };
      }),
  };
}

export function writeFileTool(scope: PathScope, options: { maxBytes: number }): Tool {
  return {
    spec: {
      name: "write_file",
      description: "Write a text file, replacing it if it exists and creating missing directories.",
      parameters: objectSchema({ path: "Path of the file to write", content: "The complete new content" }),
    },
    run: (args) =>
      withPath(scope, args, async (path, requested) => {
        if (typeof args.content !== "string") {
          return error(`invalid arguments for write_file: "content" must be a string`);
        }
        const bytes = new TextEncoder().encode(args.content);
        if (bytes.length > options.maxBytes) {
          return error(
            `Cannot write "${requested}" as the content is ${bytes.length} bytes: tools.write_file.max_bytes is ${options.maxBytes}`,
          );
        }
        await Deno.mkdir(dirname(path), { recursive: true });
        await Deno.writeFile(path, bytes);
        return { status: "ok", content: `wrote ${bytes.length} bytes to ${requested}` };
      }),
  };
}

export function listDirTool(scope: PathScope, options: { maxEntries: number }): Tool {
  return {
    spec: {
      name: "list_dir",
      description: "List a directory: one entry per line, sorted, directories end with '/'.",
      parameters: objectSchema({ path: "Path of the directory to list" }),
    },
    run: (args) =>
      withPath(scope, args, async (path, requested) => {
        const names: string[] = [];
        for await (const entry of Deno.readDir(path)) {
          names.push(entry.name + (await isDirectory(entry, `${path}/${entry.name}`) ? "/" : ""));
        }
        if (names.length === 0) return { status: "ok", content: `(${requested} is empty)` };
        names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const shown = names.slice(0, options.maxEntries);
        const more = names.length - shown.length;
        return {
          status: "ok",
          content: shown.join("\n") + (more > 0 ? `\n[${more} more entries not shown]` : ""),
        };
      }),
  };
}

async function withPath(
  scope: PathScope,
  args: Record<string, unknown>,
  act: (path: string, requested: string) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const requested = args.path;
  if (typeof requested !== "string" || requested === "") {
    return error(`invalid arguments for ${scope.tool}: "path" must be a non-empty string`);
  }
  try {
    const scoped = await resolveInScope(scope, requested);
    if (!scoped.ok) return denied(scoped.reason);
    return await act(scoped.path, requested);
  } catch (cause) {
    if (cause instanceof Deno.errors.NotFound) return error(`"${requested}" does not exist`);
    return error(
      `${scope.tool} "${requested}" failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

async function isDirectory(entry: Deno.DirEntry, path: string): Promise<boolean> {
  if (!entry.isSymlink) return entry.isDirectory;
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

function objectSchema(properties: Record<string, string>): Record<string, unknown> {
  return {
    type: "object",
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, description]) => [name, { type: "string", description }]),
    ),
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

function error(message: string): ToolOutcome {
  return { status: "error", content: `error: ${message}` };
}
