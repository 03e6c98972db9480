/**
 * Loading job files (docs/job-file.md; config.yaml and policy files: user_config_load.ts): YAML with positions → validation →
 * resolveJob, each error naming file:line:col (exit 2). The validation is passed in: job_file.ts gives zod's
 * (every caller that can wait for it), prechecked.ts the schemas compiled ahead of time (`hermes run`, whose
 * start-up would otherwise pay for importing zod and building its schemas). This module imports neither.
 */
import { dirname, resolve } from "../core/path.ts";
import { ValidationError } from "../core/errors.ts";
import { type LoadJobOptions, type ResolvedJob, resolveJob } from "./job.ts";
import { assertRunnable } from "./job_checks.ts";
import type { JobFile, UserConfig } from "./job_schema.ts";
import type { PolicyConfig } from "./policy_schema.ts";
import { offsetOf, position } from "../core/yaml_positions.ts";
import { parseYamlSource, type YamlSource } from "../core/yaml_source.ts";

/** Checks a parsed file against its schema: the validated value, or a JobProblems naming every problem. */
export interface ConfigValidators {
  jobFile(file: string, parsed: YamlSource): JobFile;
  userConfig(file: string, parsed: YamlSource): UserConfig;
  policy(file: string, parsed: YamlSource): PolicyConfig;
  /** A job given as an object (JSON-RPC `job.run {job}`): problems name `job: key.path`. */
  jobObject(value: unknown): JobFile;
}

/** The top level of a config file must be a mapping; every validator checks this first. */
export function assertMapping(file: string, parsed: YamlSource): void {
  if (parsed.value === null || typeof parsed.value !== "object" || Array.isArray(parsed.value)) {
    throw new ValidationError(`${file}:1:1: expected a mapping of keys (name, prompt, …) at the top level`);
  }
}

/** A file's text, or a ValidationError naming it as `what` (a missing file, a directory, …). */
export function readText(path: string, what: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new ValidationError(`Cannot read ${what} "${path}": no such file`);
    }
    if (error instanceof Deno.errors.IsADirectory) {
      throw new ValidationError(`Cannot read ${what} "${path}": it is a directory`);
    }
    throw new ValidationError(`Cannot read ${what} "${path}": ${(error as Error).message}`);
  }
}

/** Whether a trust policy is in force for a job loaded with `options`: then job_policy.ts must hold it. */
export function policiesInForce(options: Pick<LoadJobOptions, "config" | "untrusted">): boolean {
  return (options.config?.policies?.length ?? 0) > 0 || options.untrusted === true;
}

/**
 * Holding a job to the policies in force (job_policy.ts): `hermes run` imports it only when one is, every
 * other caller always (job_file.ts).
 */
export type JobPolicy = typeof import("./job_policy.ts");

/** `policy` when a policy is in force, never a job loaded without it then; undefined when none is. */
function policyFor(options: Pick<LoadJobOptions, "config" | "untrusted">, policy: JobPolicy | undefined) {
  if (!policiesInForce(options)) return undefined;
  if (!policy) {
    throw new Error(
      "Cannot load a job as asked: a trust policy is in force and its checks (job_policy.ts) are not loaded",
    );
  }
  return policy;
}

/** Loads, validates and resolves a job file; `locate` names the `file:line:col` of a key path in it. */
export function loadJob(
  path: string,
  options: LoadJobOptions,
  validators: ConfigValidators,
  jobPolicy?: JobPolicy,
): ResolvedJob & { locate: (keyPath: (string | number)[]) => string } {
  const text = readText(path, "job file");
  const parsed = parseYamlSource(path, text);
  const spec = validators.jobFile(path, parsed);
  const absolute = resolve(path);
  const locate = (keyPath: (string | number)[]) =>
    `${path}:${position(parsed.lines, offsetOf(parsed.doc, keyPath))}`;
  const policy = policyFor(options, jobPolicy);
  const policies = policy?.enforcePolicies(spec, options, { dir: dirname(absolute), locate });
  let job = resolveJob(spec, { ...options, path: absolute, dir: dirname(absolute), file: path, locate });
  if (policy && policies) {
    job = policy.bounded(job, policies, options.untrusted === true);
    policy.assertOutputUnprotected(job, options.untrusted === true, locate);
  }
  assertRunnable(job.spec, {
    dir: job.dir,
    locate,
    templated: options.validateOnly === true,
    configPlugins: options.config?.plugins?.length ?? 0,
    compileSchema: options.compileSchema,
    compileCron: options.compileCron,
    checkTriggerTemplate: options.checkTriggerTemplate,
    providers: options.providers,
  });
  return { ...job, locate };
}

/** Validates a job given as an object (JSON-RPC `job.run {job}` and `session.create {job}`). */
export function jobFromObject(
  value: unknown,
  dir: string,
  options: LoadJobOptions,
  validators: ConfigValidators,
  jobPolicy?: JobPolicy,
): ResolvedJob {
  const spec = validators.jobObject(value);
  const policy = policyFor(options, jobPolicy);
  const policies = policy?.enforcePolicies(spec, options, { dir, locate: () => "job" });
  let job = resolveJob(spec, { ...options, path: null, dir, file: "job" });
  if (policy && policies) job = policy.bounded(job, policies, options.untrusted === true);
  assertRunnable(job.spec, {
    dir,
    locate: () => "job",
    templated: options.validateOnly === true,
    configPlugins: options.config?.plugins?.length ?? 0,
    compileSchema: options.compileSchema,
    compileCron: options.compileCron,
    checkTriggerTemplate: options.checkTriggerTemplate,
    providers: options.providers,
  });
  return job;
}
