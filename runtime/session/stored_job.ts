/**
 * The job a stored session was started with (saved in its row), for `--resume` and for opening a stored
 * session without its job file.
 */
import { renderEnv, type ResolvedJob } from "../config/job.ts";
import type { JobFile } from "../config/job_schema.ts";
import { ValidationError } from "../core/errors.ts";
import type { SessionStore } from "../store/store.ts";

/**
 * The job a stored session was started with (saved in its row), for `--resume` without the job file. Its
 * `env:` templates are rendered again with `env`, the process environment now (without it, as stored).
 */
export async function storedJob(
  store: SessionStore,
  id: string,
  options: { env?: Record<string, string> } = {},
): Promise<ResolvedJob> {
  const session = (await store.getSession(await store.resolveSessionId(id)))!;
  return restoreJob(session.config_json, { ...options, label: `session ${session.id}` }, () => {
    throw new ValidationError(`Cannot resume session ${session.id}: it has no stored job`);
  });
}

/**
 * A job saved as JSON (`{spec, dir, path, inputs, source}`: a session's row, a queued run's snapshot), with
 * its `env:` templates rendered again with `options.env` (without it, as saved). `missing` answers a
 * saved value without a job.
 */
export function restoreJob(
  json: string,
  options: { env?: Record<string, string>; label: string },
  missing: () => never,
): ResolvedJob {
  const saved = JSON.parse(json) as Partial<ResolvedJob> & { spec?: JobFile; source?: JobFile };
  if (!saved.spec) missing();
  const inputs = saved.inputs ?? {};
  const env = options.env && saved.spec.env
    ? renderEnv(saved.spec.env, { inputs, env: options.env }, (path) => `${options.label}: ${path.join(".")}`)
    : saved.env ?? Object.fromEntries(Object.entries(saved.spec.env ?? {}).map(([k, v]) => [k, String(v)]));
  return {
    spec: saved.spec,
    path: saved.path ?? null,
    dir: saved.dir ?? Deno.cwd(),
    inputs,
    env,
    ...(saved.source ? { source: saved.source } : {}),
  };
}
