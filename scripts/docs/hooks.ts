/** The hook reference: each plugin hook's payload and what its handler may return (plugins/sdk.ts). */
import { code, table } from "./markdown.ts";
import { docSymbols, interfaceProperties, literalProperties, typeText } from "./ts_types.ts";

export interface HookDoc {
  name: string;
  description: string;
  fields: { name: string; type: string; required: boolean; description: string }[];
  returns: string;
  returnsText: string;
}

export async function hookReference(root: string): Promise<HookDoc[]> {
  const symbols = await docSymbols(`${root}/plugins/sdk.ts`);
  const results = new Map(interfaceProperties(symbols, "HookResults").map((p) => [p.name, p]));
  return interfaceProperties(symbols, "HookPayloads").map((payload) => {
    const result = results.get(payload.name);
    const fields = (literalProperties(payload.tsType)[0] ?? []).map((field) => ({
      name: field.name,
      type: typeText(field.tsType),
      required: !field.optional,
      description: field.jsDoc?.doc?.replace(/\s+/g, " ") ?? "",
    }));
    return {
      name: payload.name,
      description: payload.jsDoc?.doc?.replace(/\s+/g, " ") ?? "",
      fields,
      returns: typeText(result?.tsType),
      returnsText: result?.jsDoc?.doc?.replace(/\s+/g, " ") ?? "",
    };
  });
}

export function hooksMarkdown(hooks: readonly HookDoc[]): string {
  const parts: string[] = [];
  for (const hook of hooks) {
    parts.push(`### \`${hook.name}\``);
    if (hook.description) parts.push(hook.description);
    parts.push(
      table(
        ["field", "type", "meaning"],
        hook.fields.map((
          field,
        ) => [code(field.name) + (field.required ? "" : " (optional)"), field.type, field.description]),
      ),
    );
    const returns = hook.returns === "void"
      ? "Returns nothing (an observer)."
      : `Returns ${code(hook.returns)}.`;
    parts.push(hook.returnsText ? `${returns} ${hook.returnsText}` : returns);
  }
  return parts.join("\n\n");
}
