/**
 * Resolving a validated job (docs/job-file.md): merge with config.yaml → inputs → `{{ inputs.x }}` / `{{ env.X }}`
 * substitution. Loading files (YAML and zod, both slow to import) is job_file.ts, so a one-shot
 * `hermes run -p` without files never loads them.
 */
import { ValidationError } from "../core/errors.ts";
import type { JobFile, UserConfig } from "./job_schema.ts";
import type { Labels } from "../core/labels.ts";
import { checkedValue, runLabels } from "./labels.ts";
import type { ProtectedPaths } from "../core/protected_paths.ts";
import type { ProviderRegistry } from "../providers/registry.ts";
import type { CronCompiler } from "./cron.ts";

export type InputValue = string | number | boolean;

export interface ResolvedJob {
  /** The validated job merged over config.yaml, templates substituted. */
  spec: JobFile;
  /** Absolute path of the job file, or null for one-shot and inline jobs. */
  path: string | null;
  /** Directory relative paths resolve against. */
  dir: string;
  inputs: Record<string, InputValue>;
  /** The job's `env:` as strings (given to tools). */
  env: Record<string, string>;
  /**
   * The run's labels: the CI's, the job's `labels:` rendered, then `--label` flags (labels.ts); stored with
   * a new session. Absent when only validating.
   */
  labels?: Labels;
  /** `file:line:col` of a key path, for a job loaded from a file (loadJob). */
  locate?: (keyPath: (string | number)[]) => string;
  /**
   * The job as its file (or inline object) says, before config.yaml and templates: what a trust policy
   * judges, kept with a stored session so a resume is judged again (`admitStoredJob`).
   */
  source?: JobFile;
  /**
   * What the job may not write, whatever it grants (`--untrusted`, a policy's `protect_job`; set by
   * job_load.ts): held by write_file, output.file and every OS sandbox's read-only binds.
   */
  protect?: ProtectedPaths;
  /**
   * Most bytes of tool results the session may store, all calls and runs together (a policy's
   * `sandbox_limits.max_session_output`, `--untrusted`'s; set by job_load.ts): past it results are stored cut.
   */
  maxSessionOutput?: number;
}

export interface LoadJobOptions {
  /** `--input k=v` pairs, unparsed. */
  inputs?: Record<string, string>;
  /** Process environment snapshot, for `{{ env.X }}`. */
  env?: Record<string, string>;
  config?: UserConfig;
  /** Parse and validate only: skip input and template resolution. */
  validateOnly?: boolean;
  /** Hold the job to the strict built-in policy of `hermes run --untrusted` (policy.ts). */
  untrusted?: boolean;
  /**
   * Compiles `output.schema` so its problem is listed with the others (`validate`, RPC `job.validate`
   * pass ajv's, runtime/config/json_schema.ts); without it the session's opening checks the schema.
   */
  compileSchema?: (schema: Record<string, unknown>) => unknown;
  /** Compiles a `schedule:` (cron.ts); loadJob of prechecked.ts and job_file.ts pass it. */
  compileCron?: CronCompiler;
  /**
   * A webhook trigger's input template's problem, or null (trigger_inputs.ts); loadJob of prechecked.ts
   * (for a job with one) and job_file.ts pass it.
   */
  checkTriggerTemplate?: (template: string) => string | null;
  /**
   * The model providers a job may name, each with its own `model` keys (default: the built-in registry,
   * runtime/providers/registry.ts); another registry is validated by zod, not the precompiled check.
   */
  providers?: ProviderRegistry;
}

export interface ResolveContext extends LoadJobOptions {
  path: string | null;
  dir: string;
  /** The file named in errors (`job` for an inline job). */
  file: string;
  /** `file:line:col` of a key path, when the job came from a file with positions. */
  locate?: (keyPath: (string | number)[]) => string;
}

/** A validated job merged over config.yaml, with inputs resolved and templates substituted. */
export function resolveJob(spec: JobFile, context: ResolveContext): ResolvedJob {
  const merged = mergeConfig(spec, context.config);
  const where = context.locate ?? (() => context.file);
  checkAgentTools(merged, where);
  if (context.validateOnly) {
    checkTemplates(merged, where);
    const env = Object.fromEntries(Object.entries(merged.env ?? {}).map(([k, v]) => [k, String(v)]));
    return { spec: merged, path: context.path, dir: context.dir, inputs: {}, env, source: spec };
  }
  const inputs = resolveInputs(merged, context.inputs ?? {}, context.file);
  const env = renderEnv(merged.env, { inputs, env: context.env ?? {} }, where);
  const substitute = (text: string, keyPath: (string | number)[]) =>
    render(text, { inputs, env: { ...context.env, ...env } }, () => where(keyPath));
  const resolved: JobFile = { ...merged };
  if (merged.prompt !== undefined) resolved.prompt = substitute(merged.prompt, ["prompt"]);
  if (merged.system !== undefined) resolved.system = substitute(merged.system, ["system"]);
  if (merged.steps) resolved.steps = merged.steps.map((s, i) => substitute(s, ["steps", i]));
  if (merged.output?.file) {
    resolved.output = { ...merged.output, file: substitute(merged.output.file, ["output", "file"]) };
  }
  // MCP headers and env values keep their {{ env.X }} templates, so the stored job holds no secret values;
  // each start of the server substitutes them (runtime/mcp). Checked here: a missing variable is exit 2.
  for (const [name, entry] of Object.entries(merged.mcp_servers ?? {})) {
    for (const [key, value] of Object.entries(entry.headers ?? {})) {
      substitute(value, ["mcp_servers", name, "headers", key]);
    }
    if (entry.env && !Array.isArray(entry.env)) {
      for (const [key, value] of Object.entries(entry.env)) {
        substitute(value, ["mcp_servers", name, "env", key]);
      }
    }
  }
  const labels = runLabels({
    env: context.env ?? {},
    job: Object.fromEntries(
      Object.entries(merged.labels ?? {}).map((
        [key, value],
      ) => [key, checkedValue(substitute(String(value), ["labels", key]), where(["labels", key]))]),
    ),
  });
  return { spec: resolved, path: context.path, dir: context.dir, inputs, env, labels, source: spec };
}

/**
 * A subagent gets at most its job's tools, with the job's rules for them: one that names a tool the job does
 * not offer is refused here, before any model call, rather than given a tool its parent never had.
 */
function checkAgentTools(spec: JobFile, where: (keyPath: (string | number)[]) => string): void {
  const granted = Object.keys(spec.tools ?? {});
  for (const [name, agent] of Object.entries(spec.agents ?? {})) {
    agent.tools?.forEach((tool, i) => {
      if (!granted.includes(tool)) {
        throw new ValidationError(
          `${where(["agents", name, "tools", i])}: Cannot give agent "${name}" the tool ${tool}: ` +
            `the job's tools are ${
              granted.length ? granted.join(", ") : "none"
            } (a subagent gets at most its job's)`,
        );
      }
    });
  }
}

/** Without values, still catches references to undeclared inputs and malformed expressions. */
function checkTemplates(spec: JobFile, where: (keyPath: (string | number)[]) => string): void {
  const declared = Object.fromEntries(Object.keys(spec.inputs ?? {}).map((name) => [name, ""]));
  const anyEnv = new Proxy({}, { get: () => "" }) as Record<string, string>;
  const check = (text: string | undefined, keyPath: (string | number)[]) => {
    if (text !== undefined) render(text, { inputs: declared, env: anyEnv }, () => where(keyPath));
  };
  check(spec.prompt, ["prompt"]);
  check(spec.system, ["system"]);
  spec.steps?.forEach((step, i) => check(step, ["steps", i]));
  check(spec.output?.file, ["output", "file"]);
  for (const [name, value] of Object.entries(spec.env ?? {})) check(String(value), ["env", name]);
  for (const [key, value] of Object.entries(spec.labels ?? {})) check(String(value), ["labels", key]);
  for (const [name, entry] of Object.entries(spec.mcp_servers ?? {})) {
    for (const [key, value] of Object.entries(entry.headers ?? {})) {
      check(value, ["mcp_servers", name, "headers", key]);
    }
    if (entry.env && !Array.isArray(entry.env)) {
      for (const [key, value] of Object.entries(entry.env)) check(value, ["mcp_servers", name, "env", key]);
    }
  }
}

/** A job's sections override config.yaml's key by key; plugins are concatenated (global first). */
export function mergeConfig(spec: JobFile, config: UserConfig | undefined): JobFile {
  if (!config) return spec;
  const merged: JobFile = { ...spec };
  for (const key of ["model", "limits", "compaction", "loops", "heartbeat", "tools"] as const) {
    const base = config[key];
    if (base) (merged as Record<string, unknown>)[key] = { ...base, ...(spec[key] ?? {}) };
  }
  if (config.plugins?.length) merged.plugins = [...config.plugins, ...(spec.plugins ?? [])];
  if (config.notify?.length) merged.notify = [...config.notify, ...(spec.notify ?? [])];
  // Servers merge by name: a job's entry replaces config.yaml's entry of the same name as a whole.
  if (config.mcp_servers) merged.mcp_servers = { ...config.mcp_servers, ...(spec.mcp_servers ?? {}) };
  if (config.redact?.length) merged.redact = [...new Set([...config.redact, ...(spec.redact ?? [])])];
  return merged;
}

function resolveInputs(
  spec: JobFile,
  given: Record<string, string>,
  file: string,
): Record<string, InputValue> {
  const declared = spec.inputs ?? {};
  for (const name of Object.keys(given)) {
    if (!(name in declared)) {
      const known = Object.keys(declared);
      throw new ValidationError(
        `invalid --input "${name}": ${file} declares ${known.length ? known.join(", ") : "no inputs"}`,
      );
    }
  }
  const values: Record<string, InputValue> = {};
  for (const [name, input] of Object.entries(declared)) {
    const raw = given[name];
    if (raw === undefined) {
      if (input.default !== undefined) values[name] = input.default;
      else if (input.required) {
        const about = input.description ? ` (${input.description})` : "";
        throw new ValidationError(`Missing required input "${name}"${about}: pass --input ${name}=VALUE`);
      }
      continue;
    }
    values[name] = convertInput(name, raw, input.type ?? "string");
  }
  return values;
}

function convertInput(name: string, raw: string, type: "string" | "number" | "boolean"): InputValue {
  if (type === "number") {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n)) {
      throw new ValidationError(`invalid --input ${name}=${raw}: expected a number`);
    }
    return n;
  }
  if (type === "boolean") {
    if (/^(true|yes|1)$/i.test(raw)) return true;
    if (/^(false|no|0)$/i.test(raw)) return false;
    throw new ValidationError(`invalid --input ${name}=${raw}: expected true or false`);
  }
  return raw;
}

/**
 * The job's `env:` as strings given to tools, `{{ env.X }}` (the process environment: `GH_TOKEN: "{{
 * env.GH_TOKEN }}"` passes the runner's token on) and `{{ inputs.x }}` substituted. The spec keeps the
 * templates, so a stored session holds no secret value and `--resume` renders them again.
 */
export function renderEnv(
  env: JobFile["env"],
  scope: { inputs: Record<string, InputValue>; env: Record<string, string> },
  where: (keyPath: (string | number)[]) => string,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env ?? {}).map((
      [name, value],
    ) => [name, render(String(value), scope, () => where(["env", name]))]),
  );
}

/** Substitutes `{{ inputs.x }}` and `{{ env.X }}`; an unknown reference is an error, never "". */
function render(
  text: string,
  scope: { inputs: Record<string, InputValue>; env: Record<string, string> },
  where: () => string,
): string {
  return text.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_all, expression: string) => {
    const match = /^(inputs|env)\.([A-Za-z_][\w-]*)$/.exec(expression);
    if (!match) {
      throw new ValidationError(
        `${where()}: unknown template reference "{{ ${expression} }}": expected inputs.NAME or env.NAME`,
      );
    }
    const [, namespace, name] = match as unknown as [string, "inputs" | "env", string];
    const value = scope[namespace][name];
    if (value === undefined) {
      const known = Object.keys(scope[namespace]);
      const hint = namespace === "inputs" ? ` (declared: ${known.join(", ") || "none"})` : " (not set)";
      throw new ValidationError(`${where()}: unknown template reference "{{ ${expression} }}"${hint}`);
    }
    return String(value);
  });
}

/** Parses `--input k=v` flags. */
export function parseInputFlags(flags: readonly string[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf("=");
    if (eq <= 0) throw new ValidationError(`invalid --input "${flag}": expected NAME=VALUE`);
    inputs[flag.slice(0, eq)] = flag.slice(eq + 1);
  }
  return inputs;
}
