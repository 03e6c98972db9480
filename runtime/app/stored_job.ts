/**
 * A stored session's job as every operation that runs it takes it: read from the session's row, its `env:`
 * rendered with the environment now, and held to the trust policy in force now (config.yaml's `policy:`,
 * `--policy`, `HERMES_POLICY`; `--untrusted`'s strict one), as a new job would be, before any model call or
 * plugin start. The one place a stored job is admitted: resume, load, and out-of-band compaction.
 */
import type { ResolvedJob } from "../config/job.ts";
import { storedJob } from "../session/stored_job.ts";
import type { AppContext } from "./context.ts";

export interface AdmitOptions {
  /** Hold it to the strict built-in policy too (`hermes run --untrusted --resume`). */
  untrusted?: boolean;
}

export async function admittedStoredJob(
  context: Pick<AppContext, "store" | "env" | "config">,
  ref: string,
  options: AdmitOptions = {},
): Promise<ResolvedJob> {
  const id = await context.store.resolveSessionId(ref);
  const job = await storedJob(context.store, id, { env: context.env });
  const { admitStoredJob } = await import("../config/job_policy.ts");
  return admitStoredJob(job, {
    ...(options.untrusted ? { untrusted: true } : {}),
    ...(context.config ? { config: context.config } : {}),
  }, id);
}
