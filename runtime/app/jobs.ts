/**
 * Jobs as the operations take them: a job file path (relative to the app's directory), an inline job object,
 * or nothing (config.yaml's defaults). `validate` reports problems as data; the other operations raise a
 * ValidationError for a bad job.
 */
import type { Clock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import { mergeConfig, type ResolvedJob } from "../config/job.ts";
import { JobProblems } from "../config/job_checks.ts";
import type { JobFile, McpServerEntry, UserConfig } from "../config/job_schema.ts";
import type { ProviderRegistry } from "../providers/registry.ts";

export type InputValue = string | number | boolean;

export interface JobRef {
  /** A job file path (relative to `cwd`) or an inline job object; absent: config.yaml's defaults. */
  job?: string | Record<string, unknown>;
  inputs?: Record<string, InputValue>;
  /** Directory for this job (default: the app's). */
  cwd?: string;
}

export interface SessionJob extends JobRef {
  /** A system prompt added after the job's own. */
  system?: string;
  /** More MCP servers (ACP `mcpServers`), added to the job's; an entry replaces the job's of that name. */
  mcp_servers?: Record<string, McpServerEntry>;
}

export interface JobScope {
  env: Record<string, string>;
  config: UserConfig | undefined;
  cwd: string;
  /** The job name of a session opened without a job. */
  name: string;
  /** The provider registry job files are checked against (default: the built-in one). */
  providers?: ProviderRegistry | undefined;
}

/**
 * A job's verdict on this machine. `warnings` (only when there are some): what does not make the job invalid,
 * such as an optional MCP server that does not start under `deep`.
 */
export type Validation =
  & ({ valid: true; name: string } | { valid: false; error: string; errors: readonly string[] })
  & { warnings?: readonly string[] };

export interface ValidateOptions {
  /** Also start the job's plugins and MCP servers, as a run would, then stop them. */
  deep?: boolean;
  signal?: AbortSignal;
}

/**
 * Resolves a job given as a path or an object; a bad job is a ValidationError. zod (job_file.ts) is loaded
 * on first use: `hermes run JOB.yaml` passes a job it loaded itself and never pays for it.
 */
export async function resolveJobRef(ref: JobRef, scope: JobScope): Promise<ResolvedJob> {
  const { jobFromObject, loadJob } = await import("../config/job_file.ts");
  const { env, config, providers } = scope;
  const cwd = ref.cwd ?? scope.cwd;
  const inputs = Object.fromEntries(Object.entries(ref.inputs ?? {}).map(([k, v]) => [k, String(v)]));
  const options = { inputs, env, ...(config ? { config } : {}), ...(providers ? { providers } : {}) };
  if (typeof ref.job === "string") return loadJob(absolute(ref.job, cwd), options);
  if (ref.job !== undefined) return jobFromObject(ref.job, cwd, options);
  if (ref.inputs && Object.keys(ref.inputs).length > 0) {
    throw new ValidationError(`Invalid inputs: without a job there are no inputs to set`);
  }
  return jobFromObject(mergeConfig({ name: scope.name } as JobFile, config), cwd, { env });
}

/** The job of a new interactive session: the job, plus the client's system prompt and MCP servers. */
export async function sessionJob(params: SessionJob, scope: JobScope): Promise<ResolvedJob> {
  let job = await resolveJobRef(params, scope);
  if (params.system !== undefined && params.system.trim() !== "") {
    const system = job.spec.system ? `${job.spec.system}\n\n${params.system}` : params.system;
    job = { ...job, spec: { ...job.spec, system } };
  }
  if (params.mcp_servers && Object.keys(params.mcp_servers).length) {
    job = {
      ...job,
      spec: { ...job.spec, mcp_servers: { ...job.spec.mcp_servers, ...params.mcp_servers } },
    };
  }
  return job;
}

/**
 * Validates a job file or object without running it, as `run` would judge it on this machine (the OS sandbox
 * its tools need; with `deep`, its plugins and MCP servers): problems are the answer, not an error. Every
 * front-end (`hermes validate`, RPC `job.validate`) asks this, so their verdicts agree.
 */
export async function validateJob(
  ref: { path: string } | { job: Record<string, unknown> },
  scope: Omit<JobScope, "name"> & { clock: Clock },
  options: ValidateOptions = {},
): Promise<Validation> {
  const { config, cwd, providers } = scope;
  // ajv, so that an output.schema that does not compile is listed with the job's other problems.
  const { compileJsonSchema: compileSchema } = await import("../config/json_schema.ts");
  const { jobFromObject, loadJob } = await import("../config/job_file.ts");
  const loadOptions = {
    validateOnly: true,
    compileSchema,
    ...(config ? { config } : {}),
    ...(providers ? { providers } : {}),
  };
  try {
    const job = "path" in ref
      ? loadJob(absolute(ref.path, cwd), loadOptions)
      : jobFromObject(ref.job, cwd, loadOptions);
    const { checkMachine } = await import("./validate_machine.ts");
    const machine = await checkMachine(job, job.locate ?? (() => "job"), {
      env: scope.env,
      clock: scope.clock,
      deep: options.deep === true,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const warnings = machine.warnings.length > 0 ? { warnings: machine.warnings } : {};
    if (machine.problems.length > 0) {
      return { valid: false, error: machine.problems[0]!, errors: machine.problems, ...warnings };
    }
    return { valid: true, name: job.spec.name, ...warnings };
  } catch (error) {
    if (error instanceof ValidationError) {
      const errors = error instanceof JobProblems ? error.problems : [error.message];
      return { valid: false, error: errors[0]!, errors };
    }
    throw error;
  }
}

/** `path` against `cwd`; a `cwd` of "." keeps a relative path as given (the CLI names files as typed). */
function absolute(path: string, cwd: string): string {
  return path.startsWith("/") || cwd === "." ? path : `${cwd}/${path}`;
}
