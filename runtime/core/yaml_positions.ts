/** Maps zod issues on a YAML document to `file:line:col` messages with key paths and "did you mean". */
import { type Document, isMap, isPair, isScalar, type LineCounter } from "./yaml.ts";
import type { z } from "zod";
import { nearest } from "./suggest.ts";
import { keyPath } from "./key_path.ts";

/** Offset of the node at `path` (or of the key `key` inside it), for line/column reporting. */
export function offsetOf(doc: Document, path: readonly PropertyKey[], key?: string): number {
  let node: unknown = doc.contents;
  let offset = 0;
  const rangeStart = (n: unknown) => (n as { range?: [number, number, number] }).range?.[0];
  for (const part of [...path, ...(key === undefined ? [] : [key])]) {
    if (!node || typeof node !== "object") break;
    const items = (node as { items?: unknown[] }).items;
    if (!items) break;
    let next: unknown;
    if (isMap(node)) {
      const pair = items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(part));
      if (!pair || !isPair(pair)) break;
      offset = rangeStart(pair.key) ?? offset;
      next = part === key ? undefined : pair.value;
    } else {
      next = typeof part === "number" ? items[part] : undefined;
    }
    if (next === undefined) break;
    offset = rangeStart(next) ?? offset;
    node = next;
  }
  return offset;
}

export function position(lineCounter: LineCounter, offset: number): string {
  const { line, col } = lineCounter.linePos(offset);
  return `${line}:${col}`;
}

/** Keys a zod object schema accepts at `path`, for suggestions. */
export function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: unknown = schema;
  const unwrap = () => {
    for (let i = 0; i < 5; i++) {
      const def = (current as { _zod?: { def?: { type?: string; innerType?: unknown } } })._zod?.def;
      if (def?.type === "optional" || def?.type === "default" || def?.type === "nullable") {
        current = def.innerType;
      } else break;
    }
  };
  for (const part of path) {
    unwrap();
    const def = (current as { _zod: { def: Record<string, unknown> } })._zod.def;
    if (def.type === "object") current = (def.shape as Record<string, unknown>)[String(part)];
    else if (def.type === "array") current = def.element;
    else if (def.type === "record") current = def.valueType;
    else return [];
    if (!current) return [];
  }
  unwrap();
  const def = (current as { _zod: { def: Record<string, unknown> } })._zod.def;
  return def.type === "object" ? Object.keys(def.shape as object) : [];
}

/** Names other agents give what Hermes calls otherwise (no edit distance finds them). */
const SYNONYMS: Record<string, string> = {
  bash: "shell",
  sh: "shell",
  exec: "shell",
  terminal: "shell",
  fetch: "http_fetch",
  web_fetch: "http_fetch",
  read: "read_file",
  write: "write_file",
  ls: "list_dir",
};

/** One line for the first zod issue: `file:line:col: key path: message`. */
export function describeIssue(
  file: string,
  doc: Document,
  lineCounter: LineCounter,
  schema: z.ZodType,
  issue: z.core.$ZodIssue,
): string {
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    const where = position(lineCounter, offsetOf(doc, issue.path, key));
    const known = knownKeys(schema, issue.path);
    const synonym = SYNONYMS[key];
    const suggestion = nearest(key, known) ?? (synonym && known.includes(synonym) ? synonym : undefined);
    const full = keyPath([...issue.path, key]);
    return `${file}:${where}: unknown key "${full}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}`;
  }
  const where = position(lineCounter, offsetOf(doc, issue.path));
  return `${file}:${where}: ${keyPath(issue.path)}: ${issue.message}`;
}
