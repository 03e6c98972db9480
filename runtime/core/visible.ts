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
