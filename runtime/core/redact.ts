/**
 * Secrets (values of *_KEY, *_TOKEN, *_SECRET, *PASSWORD* variables, API keys and names a job lists in
 * `redact:`) never leave the process: they are replaced on values — strings inside objects — before
 * anything is stored or printed. Redacting serialized JSON would miss a secret holding `"`, `\` or a tab,
 * because JSON escapes those characters; the escaped, percent-encoded and base64 forms a tool may print
 * are recognised inside strings too (secret_forms.ts).
 */
import { base64Forms, hexForms, secretPattern, secretStarts } from "./secret_forms.ts";

const SECRET_NAME = /(_KEY|_TOKEN|_SECRET)$|PASSWORD|^(OPENAI_API_KEY|API_KEY)$/i;
/** Shorter values would replace ordinary words ("on", "true") everywhere. */
const MIN_SECRET_LENGTH = 6;

export type Redactor = (text: string) => string;

/** Secret value → the variable name shown in its place. */
export type Secrets = Map<string, string>;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

export interface FindSecretsOptions {
  /** More variable names whose values are secret (a job's `model.api_key_env` and `redact:`). */
  names?: readonly string[];
  /** Values secret whatever their name (e.g. an API key given directly). */
  extra?: Record<string, string>;
}

/** The secret values of `env`: variables with a secret-looking name or one of `options.names`. */
export function findSecrets(env: Record<string, string>, options: FindSecretsOptions = {}): Secrets {
  const named = new Set(options.names ?? []);
  const secrets: Secrets = new Map();
  const add = (name: string, value: string) => {
    if (value.length >= MIN_SECRET_LENGTH && !secrets.has(value)) secrets.set(value, name);
  };
  for (const [name, value] of Object.entries(env)) {
    if (isSecretName(name) || named.has(name)) add(name, value);
  }
  for (const [name, value] of Object.entries(options.extra ?? {})) add(name, value);
  return secrets;
}

/** Characters that start an escaped or encoded character (JSON, `\x`, percent-encoding, a form's space, HTML). */
const ESCAPES = /[%\\+&]/;

/**
 * A redactor that replaces every value of `secrets` with `[REDACTED:NAME]`, in any of the renderings of
 * secret_forms.ts (JSON-escaped, percent-encoded, base64) as well as raw.
 */
export function redactorOf(secrets: Secrets): Redactor {
  if (secrets.size === 0) return (text) => text;
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...secrets].sort((a, b) => b[0].length - a[0].length);
  const names = ordered.map(([, name]) => name);
  // A first character no rendering starts with is skipped at once (the whole pattern is slow to try).
  const starts = new Set(ordered.flatMap(([value]) => secretStarts(value)));
  const first = `[${[...starts].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}]`;
  const pattern = new RegExp(
    `(?=${first})(?:${ordered.map(([value]) => `(${secretPattern(value)})`).join("|")})`,
    "g",
  );
  // Text without `%`, `\`, `+` or `&` can only hold a raw, hex or base64 form: plain substring searches tell
  // whether the pattern is needed at all (most text holds no secret, and the search is far cheaper).
  const literals = ordered.flatMap(([value]) => [value, ...hexForms(value), ...base64Forms(value)]);
  return (text) => {
    if (!ESCAPES.test(text) && !literals.some((literal) => text.includes(literal))) return text;
    return text.replace(pattern, (...groups) => {
      const at = groups.slice(1, names.length + 1).findIndex((group) => group !== undefined);
      return `[REDACTED:${names[at]}]`;
    });
  };
}

/** Builds a redactor that replaces every secret value found in `env` (plus `extra`) with `[REDACTED:NAME]`. */
export function createRedactor(env: Record<string, string>, extra: Record<string, string> = {}): Redactor {
  return redactorOf(findSecrets(env, { extra }));
}

/**
 * Redacts every string inside `value`: arrays and plain objects are copied with their strings redacted;
 * anything else (numbers, functions, class instances such as Uint8Array) is returned as it is.
 */
export function redactValue<T>(value: T, redact: Redactor): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, redact)) as T;
  if (value !== null && typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v, redact);
    return out as T;
  }
  return value;
}
