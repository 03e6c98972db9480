/**
 * The secrets of one session (docs/secrets.md): the values of the process environment's secret-looking
 * variables, of the job's `model.api_key_env` and of the names in `redact:`, looked up in the process
 * environment and in the job's rendered `env:` (where a tool gets them).
 */
import { findSecrets, type Secrets } from "../core/redact.ts";
import type { ResolvedJob } from "../config/job.ts";

export function sessionSecrets(env: Record<string, string>, job: ResolvedJob): Secrets {
  const names = [
    ...(job.spec.redact ?? []),
    ...(job.spec.model?.api_key_env ? [job.spec.model.api_key_env] : []),
  ];
  const secrets = findSecrets({ ...env, ...job.env }, { names });
  // A job variable that shadows a process one hides the process value above: both are secrets.
  for (const [value, name] of findSecrets(env, { names })) if (!secrets.has(value)) secrets.set(value, name);
  return secrets;
}
