/**
 * The run queue as the operations see it: a resolved job becomes a queued run (its concurrency group
 * rendered, the job saved as it is now), a queued run becomes a job again for its worker (held to the trust
 * policy in force there). The result of a run that ended without one is runtime/session/queued_result.ts's.
 */
import { ValidationError } from "../core/errors.ts";
import type { ResolvedJob } from "../config/job.ts";
import type { UserConfig } from "../config/job_schema.ts";
import { restoreJob } from "../session/stored_job.ts";
import type { NewQueuedRun, QueuedRun, QueuedRunStatus, RunTrigger } from "../store/store.ts";

export interface SubmitOptions {
  /** Idempotency key: the same key returns the run it first submitted. */
  key?: string;
  priority?: number;
  /** Not started before this time (epoch ms). */
  not_before?: number;
  labels?: Record<string, string>;
  /** What submits it (default `cli`). */
  trigger?: RunTrigger;
}

/** The statuses a queued run ends in. */
const ENDED = new Set<QueuedRunStatus>(["success", "failed", "limit", "interrupted", "cancelled", "crashed"]);

export function hasEnded(run: Pick<QueuedRun, "status">): boolean {
  return ENDED.has(run.status);
}

/** The queued run of `job` as submitted now; a group template naming a missing input is exit 2. */
export function queuedRunOf(job: ResolvedJob, options: SubmitOptions & { now: number }): NewQueuedRun {
  const { spec } = job;
  const concurrency = spec.concurrency;
  return {
    job: spec.name,
    job_path: job.path,
    // Not job.env: its rendered values may hold secrets; spec.env keeps the templates (like a session row).
    job_snapshot: JSON.stringify({
      spec,
      dir: job.dir,
      path: job.path,
      inputs: job.inputs,
      ...(job.source ? { source: job.source } : {}),
    }),
    inputs: Object.fromEntries(Object.entries(job.inputs).map(([k, v]) => [k, String(v)])),
    ...(options.key !== undefined ? { key: options.key } : {}),
    ...(options.priority !== undefined ? { priority: options.priority } : {}),
    ...(options.not_before !== undefined ? { not_before: options.not_before } : {}),
    ...(concurrency
      ? {
        group: renderGroup(concurrency.group, job),
        group_limit: concurrency.limit ?? 1,
        cancel_in_progress: concurrency.cancel_in_progress ?? false,
      }
      : {}),
    model: spec.model?.name ?? null,
    // A cron slot's run follows the slot's rule (its claim is taken over by it too); others the job's.
    on_crash:
      (options.trigger === "schedule" ? spec.schedule?.on_crash : spec.on_crash ?? spec.schedule?.on_crash) ??
        "skip",
    trigger: options.trigger ?? "cli",
    // The submitter's labels (its CI's, the job's labels:, --label): the worker's environment is not the run's.
    ...(job.labels || options.labels ? { labels: { ...job.labels, ...options.labels } } : {}),
    now: options.now,
  };
}

/** `concurrency.group` with `{{ inputs.NAME }}` and `{{ model.name }}` substituted. */
export function renderGroup(template: string, job: ResolvedJob): string {
  const where = job.locate?.(["concurrency", "group"]) ?? `job "${job.spec.name}": concurrency.group`;
  return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_all, expression: string) => {
    if (expression === "model.name") {
      const name = job.spec.model?.name;
      if (name === undefined) {
        throw new ValidationError(`${where}: "{{ model.name }}" names no model: the job sets no model.name`);
      }
      return name;
    }
    const input = /^inputs\.([A-Za-z_][\w-]*)$/.exec(expression)?.[1];
    if (input === undefined) {
      throw new ValidationError(
        `${where}: unknown template reference "{{ ${expression} }}": expected inputs.NAME or model.name`,
      );
    }
    const value = job.inputs[input];
    if (value === undefined) {
      const known = Object.keys(job.inputs);
      throw new ValidationError(
        `${where}: "{{ ${expression} }}" names a missing input (given: ${known.join(", ") || "none"})`,
      );
    }
    return String(value);
  });
}

/**
 * The job a queued run was submitted with, its `env:` rendered with the worker's environment and held to
 * the worker's trust policy (as a resumed session is).
 */
export async function jobOfRun(
  run: QueuedRun,
  options: { env: Record<string, string>; config?: UserConfig | undefined },
): Promise<ResolvedJob> {
  const label = `run ${run.id}`;
  const job = restoreJob(run.job_snapshot, { env: options.env, label }, () => {
    throw new ValidationError(`Cannot start ${label}: it has no stored job`);
  });
  const { admitStoredJob } = await import("../config/job_policy.ts");
  const admitted = admitStoredJob(job, options.config ? { config: options.config } : {}, label);
  // Its session carries the labels the run was submitted with, not the worker's CI's.
  return { ...admitted, labels: run.labels };
}
