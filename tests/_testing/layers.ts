/**
 * The program's layers (docs/architecture.md), lowest first. A module may import its own folder and folders of lower
 * layers; folders of one layer may import each other only one way (no cycle). Test support (`*_test.ts`,
 * `_testing.ts`, `testdata/`) and `tests/`, `bench/` are not layered.
 */
import { join, relative, resolve } from "node:path";

export const LAYERS: Readonly<Record<string, number>> = {
  core: 0,
  store: 1,
  config: 1,
  sandbox: 1,
  providers: 1,
  telemetry: 1,
  tools: 2,
  agent: 3,
  cassette: 3,
  compaction: 4,
  loops: 4,
  plugins: 4,
  mcp: 4,
  session: 5,
  session_admin: 5,
  app: 6,
  rpc: 7,
  acp: 7,
  http: 7,
  commands: 8,
  main: 9,
  scripts: 10,
};

export interface ImportEdge {
  /** Importing file, relative to the repository root. */
  from: string;
  /** Imported file, relative to the repository root. */
  to: string;
  line: number;
}

const TEST_SUPPORT = /(_test|_testing)\.ts$|(^|\/)testdata\//;
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.{1,2}\/[^"]+)"/g;

/** The folder a file belongs to: `runtime/<name>` counts as `<name>`, else the top-level folder. */
export function folderOf(path: string): string {
  const parts = path.split("/");
  if (parts.length === 1) return parts[0]!.replace(/\.ts$/, "");
  return parts[0] === "runtime" && parts.length > 2 ? parts[1]! : parts[0]!;
}

/** Every relative import of every production module under `root`. */
export async function productionImports(root: string): Promise<ImportEdge[]> {
  const edges: ImportEdge[] = [];
  const visit = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      const rel = relative(root, path);
      if (entry.isDirectory) {
        if (/^(\.|dist$|tests$|bench$|examples$|node_modules$)/.test(rel)) continue;
        await visit(path);
      } else if (/\.tsx?$/.test(entry.name) && !TEST_SUPPORT.test(rel)) {
        const lines = (await Deno.readTextFile(path)).split("\n");
        lines.forEach((text, index) => {
          for (const match of text.matchAll(SPECIFIER)) {
            edges.push({ from: rel, to: relative(root, resolve(dir, match[1]!)), line: index + 1 });
          }
        });
      }
    }
  };
  await visit(root);
  return edges;
}

/** One message per import that points up a layer, names an unknown folder, or closes a folder cycle. */
export function checkLayers(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  const between = new Map<string, ImportEdge>();
  for (const edge of edges) {
    const [a, b] = [folderOf(edge.from), folderOf(edge.to)];
    if (a === b) continue;
    const where = `${edge.from}:${edge.line} imports ${edge.to}`;
    const [la, lb] = [LAYERS[a], LAYERS[b]];
    if (la === undefined || lb === undefined) {
      problems.push(
        `${where}: folder "${la === undefined ? a : b}" has no layer in tests/_testing/layers.ts`,
      );
    } else if (lb > la) {
      problems.push(`${where}: ${a} (layer ${la}) may not import ${b} (layer ${lb})`);
    } else if (!between.has(`${a}>${b}`)) between.set(`${a}>${b}`, edge);
  }
  // Up-edges are already refused, so a cycle can only run through folders of one layer.
  const next = new Map<string, Set<string>>();
  for (const key of between.keys()) {
    const [a, b] = key.split(">") as [string, string];
    next.set(a, (next.get(a) ?? new Set()).add(b));
  }
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
    if (from === to) return true;
    seen.add(from);
    return [...next.get(from) ?? []].some((n) => !seen.has(n) && reaches(n, to, seen));
  };
  const reported = new Set<string>();
  for (const [key, edge] of between) {
    const [a, b] = key.split(">") as [string, string];
    if (!reaches(b, a)) continue;
    const pair = [a, b].sort().join("|");
    if (reported.has(pair)) continue;
    reported.add(pair);
    problems.push(
      `${edge.from}:${edge.line} imports ${edge.to}: ${a} and ${b} import each other (cycle between folders)`,
    );
  }
  return problems;
}

/** Modules only the App may use: a front-end reaches sessions and their administration through runtime/app/. */
const APP_ONLY = [/^runtime\/session_admin\//, /^runtime\/session\/(live_session|served_session)\.ts$/];

/** Whether a file belongs to a front-end: a transport folder (layer 7), a command, or main. */
export function isFrontEnd(path: string): boolean {
  const layer = LAYERS[folderOf(path)];
  return layer !== undefined && layer >= 7 && layer <= 9;
}

/** One message per front-end import of a module only the App may use. */
export function checkFrontEnds(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter((edge) => isFrontEnd(edge.from) && APP_ONLY.some((pattern) => pattern.test(edge.to)))
    .map((edge) => `${edge.from}:${edge.line} imports ${edge.to}: a front-end goes through runtime/app/`);
}
