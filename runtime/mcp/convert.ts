/**
 * An MCP tool result as the text a tool result carries to the model (docs/mcp.md): text blocks verbatim,
 * embedded text resources with their uri, structured content as JSON (unless the text blocks already carry
 * it, as the spec asks servers to do), and binary parts — images, audio, blobs — as a placeholder that
 * says what was there, since a chat tool result holds text only. `isError` makes it a tool error.
 */
import { isDeepStrictEqual } from "node:util";
import type { ToolOutcome } from "../tools/tool.ts";

/** The parts of a CallToolResult this reads (the SDK's type, loosely: servers in the wild vary). */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Pre-2025 servers may answer `{toolResult}`. */
  toolResult?: unknown;
}

export function toOutcome(result: McpCallResult): ToolOutcome {
  const parts = (result.content ?? []).map(contentPart);
  const texts = (result.content ?? []).flatMap((block) => {
    const b = block as { type?: unknown; text?: unknown };
    return b.type === "text" && typeof b.text === "string" ? [b.text] : [];
  });
  if (
    result.structuredContent !== undefined && !repeats(texts, result.structuredContent)
  ) {
    parts.push(`structured content:\n${JSON.stringify(result.structuredContent, null, 2)}`);
  }
  if (result.toolResult !== undefined && parts.length === 0) parts.push(JSON.stringify(result.toolResult));
  const text = parts.join("\n\n") || "(no content)";
  return result.isError ? { status: "error", content: `error: ${text}` } : { status: "ok", content: text };
}

function contentPart(block: unknown): string {
  const b = (block ?? {}) as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return String(b.text ?? "");
    case "image":
    case "audio":
      return `[${b.type}: ${b.mimeType ?? "unknown type"}, ${base64Bytes(b.data)} bytes, not shown]`;
    case "resource": {
      const r = (b.resource ?? {}) as Record<string, unknown>;
      const head = `[resource ${r.uri ?? "?"}${r.mimeType ? ` (${r.mimeType})` : ""}]`;
      if (typeof r.text === "string") return `${head}\n${r.text}`;
      return `${head} ${base64Bytes(r.blob)} bytes of binary data, not shown`;
    }
    case "resource_link":
      return `[resource link ${b.uri ?? "?"}${b.name ? ` "${b.name}"` : ""}${
        b.mimeType ? ` (${b.mimeType})` : ""
      }]` +
        (b.description ? ` ${b.description}` : "");
    default:
      return `[${String(b.type ?? "unknown")} content, not shown]`;
  }
}

function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const clean = data.replace(/\s/g, "");
  return Math.floor(clean.length * 3 / 4) - (clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0);
}

/**
 * Whether the text blocks already say what the structured content says: one of them is that JSON, or
 * it is a flat object of strings that all appear in the text (`{content: "<the file>"}`), so sending it
 * again would only double the tokens.
 */
function repeats(texts: readonly string[], value: unknown): boolean {
  if (texts.some((text) => sameJson(text, value))) return true;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const all = texts.join("\n");
  const values = Object.values(value);
  return values.length > 0 && values.every((v) => typeof v === "string" && all.includes(v));
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}
