/**
 * Loading job files and config.yaml (docs/job-file.md) with zod's validation, whose messages name every
 * problem at its file:line:col (the pipeline is job_load.ts). Importing this module loads yaml and zod:
 * import it lazily on paths that may not need it (`hermes run` loads prechecked.ts instead).
 */
import type { z } from "zod";
import type { LoadJobOptions, ResolvedJob } from "./job.ts";
import { JobProblems } from "./job_checks.ts";
import { JobFile, schemasFor, UserConfig } from "./job_schema.ts";
import type { ProviderRegistry } from "../providers/registry.ts";
import { type Policy, PolicyConfig } from "./policy_schema.ts";
import { describeIssue } from "../core/yaml_positions.ts";
import type { YamlSource } from "../core/yaml_source.ts";
import * as load from "./job_load.ts";
import * as userConfig from "./user_config_load.ts";
import { compileCron } from "./cron.ts";
import { triggerTemplateProblem as checkTriggerTemplate } from "./trigger_inputs.ts";
import * as jobPolicy from "./job_policy.ts";

export type { UserConfigOptions } from "./user_config_load.ts";

function validate<T extends z.ZodType>(schema: T, file: string, parsed: YamlSource): z.infer<T> {
  load.assertMapping(file, parsed);
  const result = schema.safeParse(parsed.value);
  if (result.success) return result.data;
  // Every issue, one line each (an unknown-keys issue once per key), so one pass fixes the whole file.
  const issues = result.error.issues.flatMap((issue): z.core.$ZodIssue[] =>
    issue.code === "unrecognized_keys" ? issue.keys.map((key) => ({ ...issue, keys: [key] })) : [issue]
  );
  throw new JobProblems(issues.map((issue) => describeIssue(file, parsed.doc, parsed.lines, schema, issue)));
}

/** zod's validation of each file, the `model:` section under a provider registry (default: the built-in one). */
export function zodValidators(providers?: ProviderRegistry): load.ConfigValidators {
  const { jobFile, userConfig } = providers
    ? schemasFor(providers)
    : { jobFile: JobFile, userConfig: UserConfig };
  return {
    jobFile: (file, parsed) => validate(jobFile, file, parsed),
    userConfig: (file, parsed) => validate(userConfig, file, parsed),
    policy: (file, parsed) => validate(PolicyConfig, file, parsed),
    jobObject(value) {
      const result = jobFile.safeParse(value);
      if (result.success) return result.data;
      throw new JobProblems(result.error.issues.map((issue) => {
        const where = issue.path.map(String).join(".") || "(root)";
        return `job: ${where}: ${issue.message}`;
      }));
    },
  };
}

/**
 * Loads config.yaml (undefined when there is none and no policy file), with the trust policy in force
 * attached as `policies`.
 */
export function loadUserConfig(
  path: string,
  options: userConfig.UserConfigOptions = {},
): ReturnType<typeof userConfig.loadUserConfig> {
  return userConfig.loadUserConfig(path, options, zodValidators(options.providers));
}

/** Loads a trust policy file (policy_schema.ts); relative roots resolve against its directory. */
export function loadPolicy(path: string): Policy {
  return userConfig.loadPolicy(path, zodValidators());
}

/** Loads, validates and resolves a job file; `locate` names the `file:line:col` of a key path in it. */
export function loadJob(path: string, options: LoadJobOptions = {}): ReturnType<typeof load.loadJob> {
  return load.loadJob(
    path,
    { compileCron, checkTriggerTemplate, ...options },
    zodValidators(options.providers),
    jobPolicy,
  );
}

/** Validates a job given as an object (JSON-RPC `job.run {job}` and `session.create {job}`). */
export function jobFromObject(value: unknown, dir: string, options: LoadJobOptions = {}): ResolvedJob {
  return load.jobFromObject(
    value,
    dir,
    { compileCron, checkTriggerTemplate, ...options },
    zodValidators(options.providers),
    jobPolicy,
  );
}
