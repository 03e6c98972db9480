/**
 * Holding a job to the trust policies in force (config.yaml's `policy:`, a policy file, `--untrusted`'s
 * built-in one): its refusals (policy.ts) and what the policies impose on it (ceilings, protected files).
 * job_load.ts asks for it whenever a policy is in force (`policiesInForce`) and refuses to load a job
 * without it then; with none in force it is a no-op, so `hermes run` imports it only when one applies.
 */
import type { LoadJobOptions, ResolvedJob } from "./job.ts";
import { JobProblems, type Locate } from "./job_checks.ts";
import type { JobFile } from "./job_schema.ts";
import { type PolicyContext, policyProblems, untrustedPolicy } from "./policy.ts";
import { boundedLimits, boundedSandboxes, sessionOutputCeiling } from "./policy_limits.ts";
import { jobProtection, protectsOutput } from "./job_protection.ts";
import type { Policy } from "./policy_schema.ts";

type PolicyOptions = Pick<LoadJobOptions, "config" | "untrusted">;

/**
 * Refuses (exit 2, one line per problem) a job asking for more than a policy in force allows: config.yaml's
 * or the policy file's, and `--untrusted`'s built-in one.
 */
export function enforcePolicies(spec: JobFile, options: PolicyOptions, context: PolicyContext): Policy[] {
  const policies = [
    ...(options.config?.policies ?? []),
    ...(options.untrusted ? [untrustedPolicy(context.dir)] : []),
  ];
  const problems = policies.flatMap((policy) => policyProblems(spec, policy, context));
  if (problems.length > 0) throw new JobProblems(problems);
  return policies;
}

/**
 * The resolved job with what the policies impose: limit ceilings, of the run and of its sandboxes (an unset
 * limit becomes the ceiling where the default is above it) and,
 * for `--untrusted`, a shell sandbox that shows only the job directory (and the system directories
 * programs need) instead of the whole host.
 */
export function bounded(job: ResolvedJob, policies: readonly Policy[], untrusted: boolean): ResolvedJob {
  let spec = job.spec;
  if (policies.some((policy) => policy.rules.limits)) {
    const limits = boundedLimits(spec.limits, policies);
    if (limits) spec = { ...spec, limits };
  }
  spec = boundedSandboxes(spec, policies);
  // The repository's AGENTS.md and .agents/skills are its content: a policy may keep them out of the prompt.
  if (policies.some((policy) => policy.rules.repository_instructions === false)) {
    spec = { ...spec, instructions: { ...spec.instructions, agents_md: false, skills: false } };
  }
  const shell = spec.tools?.shell;
  if (untrusted && shell && shell.sandbox !== "off" && !shell.sandbox?.read) {
    spec = {
      ...spec,
      tools: { ...spec.tools, shell: { ...shell, sandbox: { ...shell.sandbox, read: ["."] } } },
    };
  }
  const maxSessionOutput = sessionOutputCeiling(policies);
  const stored = maxSessionOutput === undefined ? {} : { maxSessionOutput };
  // Its .git and own files stay read-only for every writer: what the job writes must not run on the host.
  if (untrusted || policies.some((policy) => policy.rules.protect_job === true)) {
    return { ...job, spec, ...stored, protect: jobProtection(spec, job.dir, job.path) };
  }
  return spec === job.spec && maxSessionOutput === undefined ? job : { ...job, spec, ...stored };
}

/** Refuses an `output.file` that is one of the files a protected job may not write. */
export function assertOutputUnprotected(job: ResolvedJob, untrusted: boolean, locate: Locate): void {
  const output = job.spec.output?.file;
  if (job.protect && output !== undefined && protectsOutput(output, job.dir, job.protect)) {
    const by = untrusted ? "--untrusted" : "the policy's protect_job";
    throw new JobProblems([
      `${locate(["output", "file"])}: output.file: refused by ${by}: "${output}" is one of the job's ` +
      "protected files (its .git, job files and the files it loads or runs)",
    ]);
  }
}

/**
 * A stored session's job held to the policies in force now, before it is resumed (`hermes run --resume`,
 * RPC/ACP session load): the job as its file said (`source`; a session stored before it was kept: the whole
 * stored job, config.yaml's part included) is judged as a loaded job is, and the ceilings are applied.
 * Problems name `session ID: key.path` and the rule (exit 2).
 */
export function admitStoredJob(job: ResolvedJob, options: PolicyOptions, session: string): ResolvedJob {
  const policies = enforcePolicies(job.source ?? job.spec, options, {
    dir: job.dir,
    locate: () => `session ${session}`,
  });
  return bounded(job, policies, options.untrusted === true);
}
