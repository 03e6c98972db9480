/**
 * The secrets of one session (docs/secrets.md): the values of the process environment's secret-looking
 * variables, of the job's `model.api_key_env` and of the names in `redact:`, looked up in the process
 * environment and in the job's rendered `env:` (where a tool gets them); and the credentials every provider,
 * the telemetry exporter and the store declare they read (`CredentialEnv`), whatever their names.
 */
import { type CredentialEnv, findSecrets, type Secrets } from "../core/redact.ts";
import type { ResolvedJob } from "../config/job.ts";
import { type ProviderRegistry, PROVIDERS } from "../providers/registry.ts";
import { TELEMETRY_CREDENTIAL_ENV } from "../telemetry/settings.ts";
import { STORE_CREDENTIAL_ENV } from "../store/postgres/_url.ts";

/** Every variable some part of Hermes reads a credential from, with how it holds it. */
export const KNOWN_CREDENTIALS: readonly CredentialEnv[] = [
  ...Object.values(PROVIDERS as ProviderRegistry).flatMap((entry) => [
    ...(entry.apiKeyEnv ? [{ name: entry.apiKeyEnv, form: "value" as const }] : []),
    ...(entry.credentialEnv ?? []),
  ]),
  ...TELEMETRY_CREDENTIAL_ENV,
  ...STORE_CREDENTIAL_ENV,
];

/** The process's secrets, before any job is read (what stderr is redacted with). */
export function processSecrets(env: Record<string, string>): Secrets {
  return findSecrets(env, { credentials: KNOWN_CREDENTIALS });
}

export function sessionSecrets(env: Record<string, string>, job: ResolvedJob): Secrets {
  const names = [
    ...(job.spec.redact ?? []),
    ...(job.spec.model?.api_key_env ? [job.spec.model.api_key_env] : []),
  ];
  const options = { names, credentials: KNOWN_CREDENTIALS };
  const secrets = findSecrets({ ...env, ...job.env }, options);
  // A job variable that shadows a process one hides the process value above: both are secrets.
  for (const [value, name] of findSecrets(env, options)) if (!secrets.has(value)) secrets.set(value, name);
  return secrets;
}
