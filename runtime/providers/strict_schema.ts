/**
 * Whether a JSON Schema may be sent with `strict: true` under OpenAI's strict structured-output rules: the
 * root is an object; every object lists all its properties in `required` and sets `additionalProperties:
 * false`; only the supported keywords appear (types, properties, items, enum, const, anyOf, $defs/$ref, the
 * string `pattern`/`format`, number bounds, array `minItems`/`maxItems`, annotations); at most 10 levels of
 * nesting, 5000 properties and 1000 enum values. A schema outside them is sent with `strict: false`: the
 * server then follows it as a guide, and the answer is still validated after the fact.
 */

const KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "$defs",
  "definitions",
  "$ref",
  "$schema",
  "$id",
  "title",
  "description",
  "examples",
  "pattern",
  "format",
  "multipleOf",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems",
]);

const FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);

const MAX_DEPTH = 10;
const MAX_PROPERTIES = 5000;
const MAX_ENUM_VALUES = 1000;

export function isStrictSchema(schema: Record<string, unknown>): boolean {
  if (schema.type !== "object") return false;
  const counts = { properties: 0, enumValues: 0 };
  return strictNode(schema, 1, counts) && counts.properties <= MAX_PROPERTIES &&
    counts.enumValues <= MAX_ENUM_VALUES;
}

type Counts = { properties: number; enumValues: number };

function strictNode(node: unknown, depth: number, counts: Counts): boolean {
  if (depth > MAX_DEPTH || node === null || typeof node !== "object" || Array.isArray(node)) return false;
  const schema = node as Record<string, unknown>;
  if (!Object.keys(schema).every((key) => KEYWORDS.has(key))) return false;
  if (typeof schema.format === "string" && !FORMATS.has(schema.format)) return false;
  if (Array.isArray(schema.enum)) counts.enumValues += schema.enum.length;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("object") || schema.properties !== undefined) {
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    const names = Object.keys(properties);
    counts.properties += names.length;
    const required = Array.isArray(schema.required) ? schema.required : [];
    if (schema.additionalProperties !== false) return false;
    if (!names.every((name) => required.includes(name))) return false;
    if (!names.every((name) => strictNode(properties[name], depth + 1, counts))) return false;
  }
  if (schema.items !== undefined && !strictNode(schema.items, depth + 1, counts)) return false;
  if (schema.anyOf !== undefined) {
    if (!Array.isArray(schema.anyOf)) return false;
    if (!schema.anyOf.every((branch) => strictNode(branch, depth + 1, counts))) return false;
  }
  for (const key of ["$defs", "definitions"]) {
    const defs = schema[key];
    if (defs === undefined) continue;
    if (defs === null || typeof defs !== "object") return false;
    if (!Object.values(defs).every((def) => strictNode(def, 1, counts))) return false;
  }
  return true;
}
