/**
 * JSON Schema as reference rows: every property path with its type, default and description. Used for the
 * job file (from the zod schema, `hermes schema`) and for the events (from schemas/events.schema.json).
 */
export type Schema = Record<string, unknown>;

export interface KeyRow {
  /** `tools.shell.allow`, `plugins[].path`, `mcp_servers.NAME.command` */
  path: string;
  type: string;
  required: boolean;
  default?: unknown;
  description: string;
}

const DURATION = "(ms|s|m|h|d)";
const SIZE = "(B|KB|KiB";

/** A short type: `string`, `duration`, `"off" | object`, `string[]`, `map of object`. */
export function typeName(schema: Schema): string {
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) return [...new Set(union.map(typeName))].join(" | ");
  const type = schema.type;
  if (Array.isArray(type)) return type.join(" | ");
  if (type === "string") {
    const pattern = String(schema.pattern ?? "");
    if (pattern.includes(DURATION)) return "duration";
    if (pattern.includes(SIZE)) return "size";
    if (schema.format) return `string (${schema.format})`;
    return "string";
  }
  if (type === "array") {
    const items = typeName((schema.items ?? {}) as Schema);
    return items.includes("|") ? `(${items})[]` : `${items}[]`;
  }
  if (type === "object") {
    const extra = schema.additionalProperties;
    if (!schema.properties && extra && typeof extra === "object") {
      return `map of ${typeName(extra as Schema)}`;
    }
    return "object";
  }
  if (type === undefined) return "any";
  return String(type);
}

/** Every property below `schema`, depth first, each object's keys in their declared order. */
export function keyRows(schema: Schema, prefix = "", defs: Schema = {}): KeyRow[] {
  const rows: KeyRow[] = [];
  const visit = (node: Schema, path: string): void => {
    node = resolveRef(node, defs);
    const properties = node.properties as Record<string, Schema> | undefined;
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, raw] of Object.entries(properties ?? {})) {
      const child = resolveRef(raw, defs);
      const at = path ? `${path}.${name}` : name;
      rows.push({
        path: at,
        type: typeName(child),
        required: required.has(name),
        ...("default" in child ? { default: child.default } : {}),
        description: String(child.description ?? ""),
      });
      descend(child, at);
    }
  };
  const descend = (node: Schema, path: string): void => {
    for (const branch of ((node.anyOf ?? node.oneOf) as Schema[] | undefined) ?? []) {
      const resolved = resolveRef(branch, defs);
      if (resolved.properties) visit(resolved, path);
    }
    if (node.properties) visit(node, path);
    const items = node.items as Schema | undefined;
    if (items) descend(resolveRef(items, defs), `${path}[]`);
    const extra = node.additionalProperties;
    if (extra && typeof extra === "object" && !node.properties) {
      descend(resolveRef(extra as Schema, defs), `${path}.NAME`);
    }
  };
  descend(resolveRef(schema, defs), prefix);
  return merged(rows);
}

/** One row per path: the branches of a union that share a key (`message.role`) give one row, types joined. */
function merged(rows: KeyRow[]): KeyRow[] {
  const byPath = new Map<string, KeyRow>();
  for (const row of rows) {
    const seen = byPath.get(row.path);
    if (!seen) {
      byPath.set(row.path, { ...row });
      continue;
    }
    const types = new Set([...seen.type.split(" | "), ...row.type.split(" | ")]);
    seen.type = [...types].join(" | ");
    seen.required &&= row.required;
    if (!seen.description) seen.description = row.description;
  }
  return [...byPath.values()];
}

function resolveRef(node: Schema, defs: Schema): Schema {
  const ref = node.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/$defs/")) return node;
  return (defs[ref.slice("#/$defs/".length)] as Schema | undefined) ?? node;
}
