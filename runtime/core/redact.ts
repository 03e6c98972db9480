/** Secrets (values of *_KEY, *_TOKEN, *_SECRET, *PASSWORD* variables and API keys) never leave the process. */
const SECRET_NAME = /(_KEY|_TOKEN|_SECRET)$|PASSWORD|^(OPENAI_API_KEY|API_KEY)$/i;
const MIN_SECRET_LENGTH = 6;

export type Redactor = (text: string) => string;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Builds a redactor that replaces every secret value found in `env` (plus `extra`) with `[REDACTED:NAME]`. */
export function createRedactor(env: Record<string, string>, extra: Record<string, string> = {}): Redactor {
  const secrets: [string, string][] = [];
  for (const [name, value] of Object.entries({ ...env, ...extra })) {
    if (isSecretName(name) && value.length >= MIN_SECRET_LENGTH) secrets.push([value, name]);
  }
  if (secrets.length === 0) return (text) => text;
  // Longest first, so a secret that contains another is replaced whole.
  secrets.sort((a, b) => b[0].length - a[0].length);
  return (text) => {
    let out = text;
    for (const [value, name] of secrets) {
      if (out.includes(value)) out = out.split(value).join(`[REDACTED:${name}]`);
    }
    return out;
  };
}
