/**
 * Loading job files, config.yaml and policy files (docs/job-file.md): YAML with positions → validation →
 * resolveJob, each error naming file:line:col (exit 2). The validation is passed in: job_file.ts gives zod's
 * (every caller that can wait for it), prechecked.ts the schemas compiled ahead of time (`hermes run`, whose
 * start-up would otherwise pay for importing zod and building its schemas). This module imports neither.
 */
import { dirname, resolve } from "../core/path.ts";
import { ValidationError } from "../core/errors.ts";
import { type LoadJobOptions, type ResolvedJob, resolveJob } from "./job.ts";
import { assertRunnable } from "./job_checks.ts";
import type { JobFile, UserConfig } from "./job_schema.ts";
import type { Policy, PolicyConfig } from "./policy_schema.ts";
import type { ProviderRegistry } from "../providers/registry.ts";
import { offsetOf, position } from "../core/yaml_positions.ts";
import { entryRelativeTo } from "./plugin_entry.ts";
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

function readText(path: string, what: string): string {
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

export interface UserConfigOptions {
  /** A policy file (`--policy`, `HERMES_POLICY`): it replaces config.yaml's `policy:`. */
  policy?: string | undefined;
  /** The provider registry whose `model` keys config.yaml may set (default: the built-in one). */
  providers?: ProviderRegistry;
}

/**
 * Loads config.yaml (undefined when there is none and no policy file), with the trust policy in force
 * attached as `policies`.
 */
export function loadUserConfig(
  path: string,
  options: UserConfigOptions,
  validators: ConfigValidators,
): UserConfig | undefined {
  const policy = options.policy !== undefined ? loadPolicy(options.policy, validators) : undefined;
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return policy ? { policies: [policy] } : undefined;
    throw new ValidationError(`Cannot read config "${path}": ${(error as Error).message}`);
  }
  const parsed = parseYamlSource(path, text);
  const config: UserConfig = validators.userConfig(path, parsed);
  if (policy) config.policies = [policy];
  else if (config.policy) {
    config.policies = [{
      rules: config.policy,
      source: `the policy of ${path}`,
      dir: dirname(resolve(path)),
      locate: (rule) =>
        `${path}:${position(parsed.lines, offsetOf(parsed.doc, ["policy", ...rule.split(".")]))}`,
    }];
  }
  // Global plugins live beside config.yaml: their paths and path grants resolve against its directory.
  const dir = dirname(resolve(path));
  if (config.plugins) config.plugins = config.plugins.map((entry) => entryRelativeTo(entry, dir));
  // So do global MCP servers' cwd and sandbox paths (a job's resolve against the job's directory).
  for (const [name, entry] of Object.entries(config.mcp_servers ?? {})) {
    const sandbox = entry.sandbox === "off" || entry.sandbox === undefined ? entry.sandbox : {
      ...entry.sandbox,
      ...(entry.sandbox.read ? { read: entry.sandbox.read.map((path) => resolve(dir, path)) } : {}),
      ...(entry.sandbox.write ? { write: entry.sandbox.write.map((path) => resolve(dir, path)) } : {}),
    };
    config.mcp_servers![name] = {
      ...entry,
      ...(entry.command !== undefined ? { cwd: resolve(dir, entry.cwd ?? ".") } : {}),
      ...(sandbox !== undefined ? { sandbox } : {}),
    };
  }
  return config;
}

/** Loads a trust policy file (policy_schema.ts); relative roots resolve against its directory. */
export function loadPolicy(path: string, validators: ConfigValidators): Policy {
  const parsed = parseYamlSource(path, readText(path, "policy file"));
  const rules = validators.policy(path, parsed);
  return {
    rules,
    source: `policy ${path}`,
    dir: dirname(resolve(path)),
    locate: (rule) => `${path}:${position(parsed.lines, offsetOf(parsed.doc, rule.split(".")))}`,
  };
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
    providers: options.providers,
  });
  return job;
}
