/**
 * The renderings of a secret value that a tool, a model or a log may print instead of the value itself,
 * as one regular-expression source per secret:
 *
 * - raw, JSON-escaped (`\"`, `\\`, `\t`, `\/`, `\u0009` in either case, also escaped again inside JSON
 *   held in a JSON string), percent-encoded (any set of characters encoded, upper- or lower-case hex, `+`
 *   for a space as in forms), `\xNN` byte escapes (C, Python and JavaScript string literals) and HTML
 *   character references (`&#34;`, `&#x22;`, `&quot;`), character by character, so every encoder's choice
 *   of what to escape is covered and mixed forms too;
 * - hex of the value's UTF-8 bytes, in either case (`xxd -p`, `od`, a hash tool's input echoed);
 * - base64 (standard and url-safe, with or without padding) of the value alone, and the part of it that
 *   does not depend on its neighbours at each of the three byte alignments, so the secret is found
 *   inside a longer stream such as the base64 of `user:secret` in an HTTP basic-auth header.
 *
 * Other encodings (hex with separators, base64 broken across lines, compressed, encrypted) are not recognised.
 */

/** Shorter stable base64 parts would match unrelated text. */
const MIN_BASE64_PART = 6;
/** JSON inside a JSON string inside … : escapes up to this many levels deep are recognised. */
const MAX_ESCAPE_DEPTH = 3;
const encoder = new TextEncoder();

/** A regular-expression source matching every rendering of `value` listed above. */
export function secretPattern(value: string): string {
  const characterwise = [...value].map(characterForms).join("");
  const hex = [...encoder.encode(value)].map((byte) => hexPattern(byte, 2)).join("");
  const base64 = base64Forms(value).sort((a, b) => b.length - a.length).map(escapeRegExp);
  return [characterwise, hex, ...base64].join("|");
}

/** The characters (UTF-16 units) a rendering of `value` may start with. */
export function secretStarts(value: string): string[] {
  const first = [...value][0] ?? "";
  const hex = (encoder.encode(first)[0] ?? 0).toString(16).padStart(2, "0")[0]!;
  const starts = new Set([
    first.charAt(0),
    "%",
    "\\",
    "&",
    hex,
    hex.toUpperCase(),
    ...base64Forms(value).map((form) => form[0]!),
  ]);
  if (first === " ") starts.add("+");
  return [...starts];
}

function characterForms(char: string): string {
  const forms = [escapeRegExp(char)];
  const bytes = encoder.encode(char);
  forms.push([...bytes].map((byte) => `%${hexPattern(byte, 2)}`).join(""));
  const code = char.codePointAt(0)!;
  forms.push(`&#0*${code};`, `&#[xX]0*${hexPattern(code, 1)};`);
  const named = HTML_NAMED[char];
  if (named) forms.push(`&${named};`);
  if (char === " ") forms.push("\\+");
  // The backslash of a JSON escape, doubled again for each level of JSON held in a JSON string.
  const slashes = `\\\\{1,${2 ** MAX_ESCAPE_DEPTH - 1}}`;
  const short = JSON_SHORT[char];
  if (short) forms.push(`${slashes}${escapeRegExp(short)}`);
  forms.push([...bytes].map((byte) => `${slashes}[xX]${hexPattern(byte, 2)}`).join(""));
  // \uXXXX for every character (ensure_ascii encoders escape all non-ASCII ones); an astral character
  // is its two surrogates, each escaped.
  forms.push(utf16Units(char).map((unit) => `${slashes}u${hexPattern(unit, 4)}`).join(""));
  return `(?:${forms.join("|")})`;
}

/** The character after the backslash in JSON's short escapes. */
const JSON_SHORT: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  "\b": "b",
  "\f": "f",
  "\n": "n",
  "\r": "r",
  "\t": "t",
};

/** The named references HTML escapers use (`&apos;` in XML and HTML5). */
const HTML_NAMED: Record<string, string> = { '"': "quot", "&": "amp", "<": "lt", ">": "gt", "'": "apos" };

function utf16Units(char: string): number[] {
  const units: number[] = [];
  for (let i = 0; i < char.length; i++) units.push(char.charCodeAt(i));
  return units;
}

/** `byte` as `width` hex digits, each letter in either case. */
function hexPattern(byte: number, width: number): string {
  return [...byte.toString(16).padStart(width, "0")].map((digit) =>
    /[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit
  ).join("");
}

/** The value's UTF-8 bytes in hex, lower- and upper-case (the pattern also takes mixed case). */
export function hexForms(value: string): string[] {
  const hex = [...encoder.encode(value)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return [hex, hex.toUpperCase()];
}

/** The base64 strings that reveal `value`: its whole encoding and its stable part at each alignment. */
export function base64Forms(value: string): string[] {
  const bytes = encoder.encode(value);
  const forms = new Set<string>();
  const whole = toBase64(bytes);
  forms.add(whole);
  forms.add(whole.replace(/=+$/, ""));
  for (let offset = 0; offset < 3; offset++) {
    // Pad with `offset` bytes before and two after; keep the characters made only of the value's bits.
    const padded = new Uint8Array(offset + bytes.length + 2);
    padded.set(bytes, offset);
    const encoded = toBase64(padded);
    const first = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const part = encoded.slice(first, end);
    if (part.length >= MIN_BASE64_PART) forms.add(part);
  }
  for (const form of [...forms]) forms.add(form.replaceAll("+", "-").replaceAll("/", "_"));
  return [...forms];
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}
