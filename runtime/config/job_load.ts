/**
 * Loading job files, config.yaml and policy files (docs/job-file.md): YAML with positions → validation →
 * resolveJob, each error naming file:line:col (exit 2). The validation is passed in: job_file.ts gives zod's
 * (every caller that can wait for it), prechecked.ts the schemas compiled ahead of time (`hermes run`, whose
 * start-up would otherwise pay for importing zod and building its schemas). This module imports neither.
 */
import { dirname, resolve } from "../core/path.ts";
import { ValidationError } from "../core/errors.ts";
import { type LoadJobOptions, type ResolvedJob, resolveJob } from "./job.ts";
import { assertRunnable, JobProblems } from "./job_checks.ts";
import type { JobFile, UserConfig } from "./job_schema.ts";
import { type PolicyContext, policyProblems, untrustedPolicy } from "./policy.ts";
import { boundedLimits, boundedSandboxes, sessionOutputCeiling } from "./policy_limits.ts";
import { jobProtection, protectsOutput } from "./job_protection.ts";
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

/**
 * Refuses (exit 2, one line per problem) a job asking for more than a policy in force allows: config.yaml's
 * or the policy file's, and `--untrusted`'s built-in one.
 */
function enforcePolicies(
  spec: JobFile,
  options: Pick<LoadJobOptions, "config" | "untrusted">,
  context: PolicyContext,
): Policy[] {
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
function bounded(job: ResolvedJob, policies: readonly Policy[], untrusted: boolean): ResolvedJob {
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

/** Loads, validates and resolves a job file; `locate` names the `file:line:col` of a key path in it. */
export function loadJob(
  path: string,
  options: LoadJobOptions,
  validators: ConfigValidators,
): ResolvedJob & { locate: (keyPath: (string | number)[]) => string } {
  const text = readText(path, "job file");
  const parsed = parseYamlSource(path, text);
  const spec = validators.jobFile(path, parsed);
  const absolute = resolve(path);
  const locate = (keyPath: (string | number)[]) =>
    `${path}:${position(parsed.lines, offsetOf(parsed.doc, keyPath))}`;
  const policies = enforcePolicies(spec, options, { dir: dirname(absolute), locate });
  const job = bounded(
    resolveJob(spec, { ...options, path: absolute, dir: dirname(absolute), file: path, locate }),
    policies,
    options.untrusted === true,
  );
  const output = job.spec.output?.file;
  if (job.protect && output !== undefined && protectsOutput(output, job.dir, job.protect)) {
    const by = options.untrusted ? "--untrusted" : "the policy's protect_job";
    throw new JobProblems([
      `${locate(["output", "file"])}: output.file: refused by ${by}: "${output}" is one of the job's ` +
      "protected files (its .git, job files and the files it loads or runs)",
    ]);
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

/**
 * A stored session's job held to the policies in force now, before it is resumed (`hermes run --resume`,
 * RPC/ACP session load): the job as its file said (`source`; a session stored before it was kept: the whole
 * stored job, config.yaml's part included) is judged as a loaded job is, and the ceilings are applied.
 * Problems name `session ID: key.path` and the rule (exit 2).
 */
export function admitStoredJob(
  job: ResolvedJob,
  options: Pick<LoadJobOptions, "config" | "untrusted">,
  session: string,
): ResolvedJob {
  const policies = enforcePolicies(job.source ?? job.spec, options, {
    dir: job.dir,
    locate: () => `session ${session}`,
  });
  return bounded(job, policies, options.untrusted === true);
}

/** Validates a job given as an object (JSON-RPC `job.run {job}` and `session.create {job}`). */
export function jobFromObject(
  value: unknown,
  dir: string,
  options: LoadJobOptions,
  validators: ConfigValidators,
): ResolvedJob {
  const spec = validators.jobObject(value);
  const policies = enforcePolicies(spec, options, { dir, locate: () => "job" });
  const job = bounded(
    resolveJob(spec, { ...options, path: null, dir, file: "job" }),
    policies,
    options.untrusted === true,
  );
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
