/**
 * Secrets (values of *_KEY, *_TOKEN, *_SECRET, *PASSWORD* variables, API keys and names a job lists in
 * `redact:`) never leave the process: they are replaced on values — strings inside objects — before
 * anything is stored or printed. Redacting serialized JSON would miss a secret holding `"`, `\` or a tab,
 * because JSON escapes those characters; the escaped, percent-encoded and base64 forms a tool may print
 * are recognised inside strings too (secret_forms.ts).
 */
import { base64Forms, hexForms, secretPattern, secretStarts } from "./secret_forms.ts";
import { readTextOrNull } from "./fs.ts";

const SECRET_NAME = /(_KEY|_TOKEN|_SECRET)$|PASSWORD|^(OPENAI_API_KEY|API_KEY)$/i;
/** Shorter values would replace ordinary words ("on", "true") everywhere. */
const MIN_SECRET_LENGTH = 6;

export type Redactor = (text: string) => string;

/** Secret value → the variable name shown in its place. */
export type Secrets = Map<string, string>;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * How a variable Hermes reads holds a credential. Each reader (a provider, the telemetry exporter, the store)
 * declares the variables it reads, so a credential whose name no rule above recognises
 * (`AWS_BEARER_TOKEN_BEDROCK`, `OTEL_EXPORTER_OTLP_HEADERS`) is still a secret:
 * - `value`: the whole value;
 * - `url_password`: the password of a URL (`scheme://user:PASSWORD@host`, `?password=`), as written and
 *   decoded — the rest of the URL stays readable;
 * - `header_values`: `key=value,key2=value2` (OTLP's form): each value, as written and decoded;
 * - `credentials_file`: a path to a JSON credentials file (Google's application default credentials): its
 *   `private_key`, `private_key_id`, `client_secret` and `refresh_token`.
 */
export type CredentialForm = "value" | "url_password" | "header_values" | "credentials_file";

export interface CredentialEnv {
  readonly name: string;
  readonly form: CredentialForm;
}

export interface FindSecretsOptions {
  /** More variable names whose values are secret (a job's `model.api_key_env` and `redact:`). */
  names?: readonly string[];
  /** Variables Hermes reads credentials from, and how (see CredentialForm). */
  credentials?: readonly CredentialEnv[];
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
  for (const credential of options.credentials ?? []) {
    const value = env[credential.name];
    if (value) { for (const part of credentialParts(value, credential.form)) add(credential.name, part); }
  }
  for (const [name, value] of Object.entries(options.extra ?? {})) add(name, value);
  return secrets;
}

const FILE_SECRETS = ["private_key", "private_key_id", "client_secret", "refresh_token"];

/** The secret parts of one credential variable's value (see CredentialForm). */
function credentialParts(value: string, form: CredentialForm): string[] {
  const decoded = (text: string) => {
    try {
      return [text, decodeURIComponent(text)];
    } catch {
      return [text];
    }
  };
  switch (form) {
    case "value":
      return [value];
    case "url_password": {
      const userinfo = /^[a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:([^@/?#]*)@/i.exec(value)?.[1];
      const query = [...value.matchAll(/[?&]password=([^&#]*)/g)].map((match) => match[1]!);
      return [...(userinfo ? [userinfo] : []), ...query].flatMap(decoded);
    }
    case "header_values":
      return value.split(",").flatMap((pair) => {
        const at = pair.indexOf("=");
        return at > 0 ? decoded(pair.slice(at + 1).trim()) : [];
      });
    case "credentials_file": {
      const text = readTextOrNull(value);
      if (text === null) return [];
      try {
        const file = JSON.parse(text) as Record<string, unknown>;
        return FILE_SECRETS.map((key) => file[key]).filter((part): part is string =>
          typeof part === "string"
        );
      } catch {
        return [];
      }
    }
  }
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
 * anything else (numbers, functions, class instances such as Uint8Array) is returned as it is. A signed
 * block in an array (an object with a string `signature`, such as Anthropic's `thinking`, or a
 * `redacted_thinking` one) that holds a secret is left out instead: rewritten, its signature would no
 * longer match and the provider would refuse every later request that sends it back.
 */
export function redactValue<T>(value: T, redact: Redactor): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      const redacted = redactValue(item, redact);
      return isSigned(item) && JSON.stringify(redacted) !== JSON.stringify(item) ? [] : [redacted];
    }) as T;
  }
  if (value !== null && typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v, redact);
    return out as T;
  }
  return value;
}

function isSigned(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const block = value as Record<string, unknown>;
  return typeof block.signature === "string" || block.type === "redacted_thinking";
}
