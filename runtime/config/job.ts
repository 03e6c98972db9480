/**
 * Loading job files (DESIGN §3): YAML with positions → zod validation → merge with config.yaml →
 * inputs and `{{ inputs.x }}` / `{{ env.X }}` substitution. Every error names file:line:col and exits 2.
 */
import { dirname, resolve } from "node:path";
import { ValidationError } from "../core/errors.ts";
import { JobFile, UserConfig } from "./job_schema.ts";
import { describeIssue, offsetOf, position } from "./_yaml_positions.ts";
import type { z } from "zod";
import { entryRelativeTo } from "./plugin_entry.ts";
import { parseYamlSource, type YamlSource } from "./yaml_source.ts";

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
}

export interface LoadJobOptions {
  /** `--input k=v` pairs, unparsed. */
  inputs?: Record<string, string>;
  /** Process environment snapshot, for `{{ env.X }}`. */
  env?: Record<string, string>;
  config?: UserConfig;
  /** Parse and validate only: skip input and template resolution. */
  validateOnly?: boolean;
}

type ParsedYaml = YamlSource;

function validate<T extends z.ZodType>(schema: T, file: string, parsed: ParsedYaml): z.infer<T> {
  if (parsed.value === null || typeof parsed.value !== "object" || Array.isArray(parsed.value)) {
    throw new ValidationError(`${file}:1:1: expected a mapping of keys (name, prompt, …) at the top level`);
  }
  const result = schema.safeParse(parsed.value);
  if (result.success) return result.data;
  throw new ValidationError(describeIssue(file, parsed.doc, parsed.lines, schema, result.error.issues[0]!));
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

export function loadUserConfig(path: string): UserConfig | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw new ValidationError(`Cannot read config "${path}": ${(error as Error).message}`);
  }
  const config = validate(UserConfig, path, parseYamlSource(path, text));
  // Global plugins live beside config.yaml: their paths and path grants resolve against its directory.
  const dir = dirname(resolve(path));
  if (config.plugins) config.plugins = config.plugins.map((entry) => entryRelativeTo(entry, dir));
  return config;
}

/** Loads, validates and resolves a job file. */
export function loadJob(path: string, options: LoadJobOptions = {}): ResolvedJob {
  const text = readText(path, "job file");
  const parsed = parseYamlSource(path, text);
  const spec = validate(JobFile, path, parsed);
  const absolute = resolve(path);
  return resolveJob(spec, { ...options, path: absolute, dir: dirname(absolute), parsed, file: path });
}

/** Validates a job given as an object (JSON-RPC `job.run {job}` and `session.create {job}`). */
export function jobFromObject(value: unknown, dir: string, options: LoadJobOptions = {}): ResolvedJob {
  const result = JobFile.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = issue.path.map(String).join(".") || "(root)";
    throw new ValidationError(`job: ${where}: ${issue.message}`);
  }
  return resolveJob(result.data, { ...options, path: null, dir, file: "job" });
}

interface ResolveContext extends LoadJobOptions {
  path: string | null;
  dir: string;
  file: string;
  parsed?: ParsedYaml;
}

function resolveJob(spec: JobFile, context: ResolveContext): ResolvedJob {
  const merged = mergeConfig(spec, context.config);
  const env = Object.fromEntries(Object.entries(merged.env ?? {}).map(([k, v]) => [k, String(v)]));
  const where = (keyPath: (string | number)[]) =>
    context.parsed
      ? `${context.file}:${position(context.parsed.lines, offsetOf(context.parsed.doc, keyPath))}`
      : context.file;
  if (context.validateOnly) {
    checkTemplates(merged, where);
    return { spec: merged, path: context.path, dir: context.dir, inputs: {}, env };
  }
  const inputs = resolveInputs(merged, context.inputs ?? {}, context.file);
  const substitute = (text: string, keyPath: (string | number)[]) =>
    render(text, { inputs, env: { ...context.env, ...env } }, () => where(keyPath));
  const resolved: JobFile = { ...merged };
  if (merged.prompt !== undefined) resolved.prompt = substitute(merged.prompt, ["prompt"]);
  if (merged.system !== undefined) resolved.system = substitute(merged.system, ["system"]);
  if (merged.steps) resolved.steps = merged.steps.map((s, i) => substitute(s, ["steps", i]));
  if (merged.output?.file) {
    resolved.output = { ...merged.output, file: substitute(merged.output.file, ["output", "file"]) };
  }
  return { spec: resolved, path: context.path, dir: context.dir, inputs, env };
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
        `Invalid --input "${name}": ${file} declares ${known.length ? known.join(", ") : "no inputs"}`,
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
      throw new ValidationError(`Invalid --input ${name}=${raw}: expected a number`);
    }
    return n;
  }
  if (type === "boolean") {
    if (/^(true|yes|1)$/i.test(raw)) return true;
    if (/^(false|no|0)$/i.test(raw)) return false;
    throw new ValidationError(`Invalid --input ${name}=${raw}: expected true or false`);
  }
  return raw;
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
    if (eq <= 0) throw new ValidationError(`Invalid --input "${flag}": expected NAME=VALUE`);
    inputs[flag.slice(0, eq)] = flag.slice(eq + 1);
  }
  return inputs;
}
