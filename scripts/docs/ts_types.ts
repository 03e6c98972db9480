/**
 * TypeScript types as `deno doc --json` describes them, printed back as short type text: the hook payloads
 * (plugins/sdk.ts) and, until the events have a JSON Schema, the event fields (runtime/core/events.ts).
 */

// deno doc's JSON: only the parts read here.
export interface DocType {
  kind: string;
  repr?: string;
  value?: unknown;
}
export interface DocProperty {
  name: string;
  optional?: boolean;
  jsDoc?: { doc?: string };
  tsType?: DocType;
}
interface DocSymbol {
  name: string;
  declarations: { kind: string; jsDoc?: { doc?: string }; def: Record<string, unknown> }[];
}

/** The exported symbols of one module, by name. */
export async function docSymbols(path: string): Promise<Map<string, DocSymbol>> {
  const output = await new Deno.Command(Deno.execPath(), { args: ["doc", "--json", path], stderr: "inherit" })
    .output();
  if (!output.success) throw new Error(`Cannot read the types of ${path}: deno doc failed`);
  const json = JSON.parse(new TextDecoder().decode(output.stdout));
  const module = Object.values(json.nodes as Record<string, { symbols: DocSymbol[] }>)[0]!;
  return new Map(module.symbols.map((symbol) => [symbol.name, symbol]));
}

/** The properties of an exported interface. */
export function interfaceProperties(symbols: Map<string, DocSymbol>, name: string): DocProperty[] {
  const declaration = symbols.get(name)?.declarations.find((d) => d.kind === "interface");
  if (!declaration) throw new Error(`Cannot find the interface ${name}`);
  return declaration.def.properties as DocProperty[];
}

/** The properties of a type literal (`{ a: string }`), or of each branch of a union of them. */
export function literalProperties(type: DocType | undefined): DocProperty[][] {
  if (!type) return [];
  if (type.kind === "typeLiteral") return [(type.value as { properties: DocProperty[] }).properties];
  if (type.kind === "union") return (type.value as DocType[]).flatMap(literalProperties);
  return [];
}

export function typeText(type: DocType | undefined): string {
  if (!type) return "unknown";
  switch (type.kind) {
    case "keyword":
      return String(type.value);
    case "literal": {
      const literal = type.value as { kind: string; string?: string; number?: number; boolean?: boolean };
      return literal.kind === "string" ? JSON.stringify(literal.string) : String(type.repr);
    }
    case "union":
      return (type.value as DocType[]).map(typeText).join(" | ");
    case "array": {
      const inner = typeText(type.value as DocType);
      return inner.includes(" ") ? `(${inner})[]` : `${inner}[]`;
    }
    case "parenthesized":
      return `(${typeText(type.value as DocType)})`;
    case "typeLiteral":
      return "object";
    case "typeRef": {
      const ref = type.value as { typeName: string; typeParams?: DocType[] };
      if (ref.typeName === "Record") return "object";
      if (ref.typeName === "Required" && ref.typeParams?.[0]) return typeText(ref.typeParams[0]);
      return ref.typeName;
    }
    default:
      return type.repr || type.kind;
  }
}
