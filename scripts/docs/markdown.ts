/**
 * The generated parts of a docs page: each sits between `<!-- generated:NAME -->` and
 * `<!-- /generated:NAME -->`, so the prose around it is written by hand and `deno task docs` only rewrites
 * what is between the markers.
 */

/** `text` with the block NAME replaced by `body`; an error naming the page when the markers are missing. */
export function replaceBlock(text: string, name: string, body: string, page: string): string {
  const open = `<!-- generated:${name} (deno task docs) -->`;
  const close = `<!-- /generated:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) {
    throw new Error(`Cannot generate ${name} in ${page}: the page has no "${open}" … "${close}" block`);
  }
  return `${text.slice(0, start + open.length)}\n\n${body.trim()}\n\n${text.slice(end)}`;
}

/** One table cell: line breaks joined, pipes escaped, and outside code spans `*`, `<` and `[` too (a
 * description's `*_KEY` or `<name>` is text, not emphasis or HTML). */
export function cell(text: string): string {
  const parts = text.replace(/\s*\n\s*/g, " ").split(/(`[^`]*`)/);
  return parts.map((part, i) => i % 2 === 1 ? part : part.replace(/([*<]|\[(?!\]))/g, "\\$1"))
    .join("").replace(/\|/g, "\\|");
}

export function code(text: string): string {
  return text.includes("`") ? `\`\` ${text} \`\`` : `\`${text}\``;
}

export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const lines = [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(" | ")} |`);
  return lines.join("\n");
}
