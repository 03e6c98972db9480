/**
 * The event reference: every event type and its fields. From the published JSON Schema
 * (schemas/events.schema.json) when the repository has one, else from the typed union in
 * runtime/core/events.ts (`EventFields`, read with `deno doc`).
 */
import { code, table } from "./markdown.ts";
import { keyRows, type Schema } from "./json_schema.ts";
import { docSymbols, interfaceProperties, literalProperties, typeText } from "./ts_types.ts";

export interface EventField {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

export interface EventDoc {
  type: string;
  description: string;
  fields: EventField[];
}

export interface EventReference {
  source: string;
  envelope: EventField[];
  events: EventDoc[];
}

const ENVELOPE = new Set(["type", "schema_version", "session_id", "seq", "ts"]);

export async function eventReference(root: string): Promise<EventReference> {
  const published = `${root}/schemas/events.schema.json`;
  try {
    const schema = JSON.parse(await Deno.readTextFile(published)) as Schema;
    return fromJsonSchema(schema);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return await fromUnion(`${root}/runtime/core/events.ts`);
}

function fromJsonSchema(schema: Schema): EventReference {
  const defs = (schema.$defs ?? {}) as Record<string, Schema>;
  const events: EventDoc[] = [];
  let envelope: EventField[] = [];
  for (const [type, def] of Object.entries(defs)) {
    const rows = keyRows(def, "", defs);
    const fields = rows.map((row) => ({
      name: row.path,
      type: row.type,
      required: row.required,
      description: row.description,
    }));
    if (envelope.length === 0) {
      envelope = fields.filter((field) => ENVELOPE.has(field.name)).map((field) =>
        field.name === "type"
          ? { ...field, type: "string", description: "The event type (the headings below)" }
          : field
      );
    }
    events.push({
      type,
      description: String(def.description ?? ""),
      fields: fields.filter((field) => !ENVELOPE.has(field.name)),
    });
  }
  return { source: "schemas/events.schema.json", envelope, events };
}

async function fromUnion(path: string): Promise<EventReference> {
  const symbols = await docSymbols(path);
  const toField = (p: { name: string; optional?: boolean; jsDoc?: { doc?: string }; tsType?: unknown }) => ({
    name: p.name,
    type: typeText(p.tsType as never),
    required: !p.optional,
    description: p.jsDoc?.doc?.replace(/\s+/g, " ") ?? "",
  });
  const envelope = [
    { name: "type", type: "string", required: true, description: "The event type (the headings below)" },
    ...interfaceProperties(symbols, "EventEnvelope").map(toField),
  ];
  const results = interfaceProperties(symbols, "RunResultFields").map(toField);
  const events = interfaceProperties(symbols, "EventFields").map((property) => {
    const branches = literalProperties(property.tsType);
    const byName = new Map<string, EventField>();
    for (const branch of branches) {
      for (const field of branch.map(toField)) {
        const seen = byName.get(field.name);
        if (!seen) byName.set(field.name, field);
        else if (seen.type !== field.type) seen.type = `${seen.type} | ${field.type}`;
      }
    }
    // A field that not every branch has (`source` of a user message) is not always there.
    for (const field of byName.values()) {
      if (!branches.every((branch) => branch.some((p) => p.name === field.name))) field.required = false;
    }
    const fields = branches.length > 0 ? [...byName.values()] : property.name === "result" ? results : [];
    return { type: property.name, description: property.jsDoc?.doc?.replace(/\s+/g, " ") ?? "", fields };
  });
  return { source: "runtime/core/events.ts", envelope, events };
}

export function eventsMarkdown(reference: EventReference): string {
  const parts = [
    `Generated from \`${reference.source}\`. Every event carries the envelope fields, then the fields of its type.`,
    "### Envelope",
    fieldTable(reference.envelope),
    "### Event types",
    reference.events.map((event) => `[${code(event.type)}](#${slug(event.type)})`).join(" · "),
  ];
  for (const event of reference.events) {
    parts.push(`### \`${event.type}\``);
    if (event.description) parts.push(event.description);
    parts.push(event.fields.length > 0 ? fieldTable(event.fields) : "No fields beyond the envelope.");
  }
  return parts.join("\n\n");
}

function fieldTable(fields: readonly EventField[]): string {
  return table(
    ["field", "type", "always", "meaning"],
    fields.map((field) => [code(field.name), field.type, field.required ? "yes" : "no", field.description]),
  );
}

/** GitHub's anchor of a heading `` `tool.call` ``. */
function slug(type: string): string {
  return type.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-");
}
