/**
 * What `run` and `daemon` would refuse in a valid-looking job, checked before any model call: a cron
 * expression or time zone croner rejects (cron.ts), a provider without a `model` key it needs, a plugin path that
 * does not exist, an `output.file` outside the job directory, an `output.schema` that does not compile
 * (with the compiler the caller loaded). Used by loadJob / jobFromObject, so `validate`, RPC `job.validate`, `run` and
 * the daemon refuse the same.
 */
import { insideGit } from "../core/protected_paths.ts";
import { isAbsolute, relative, resolve } from "../core/path.ts";
import { ValidationError } from "../core/errors.ts";
import type { JobFile } from "./job_schema.ts";
import type { CronCompiler } from "./cron.ts";
import { keyPath } from "../core/key_path.ts";
import { providerOf, type ProviderRegistry, PROVIDERS } from "../providers/registry.ts";
import { existsSync } from "../core/fs.ts";

/** Every problem of one file, one `file:line:col: key.path: …` line each; the message holds them all. */
export class JobProblems extends ValidationError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join("\n"));
    this.problems = problems;
  }
}

/** `file:line:col` (or the file) of a key path. */
export type Locate = (keyPath: (string | number)[]) => string;

export interface CheckContext {
  dir: string;
  locate: Locate;
  /** Templates are not substituted yet: only the literal part of `output.file` is checked. */
  templated: boolean;
  /** How many of `spec.plugins` came first from config.yaml (named so in errors, without a position). */
  configPlugins?: number;
  /** Compiles `output.schema` (ajv, loaded by the caller); without one the session's opening checks it. */
  compileSchema?: SchemaCompiler | undefined;
  /** The provider registry in use (default: the built-in one). */
  providers?: ProviderRegistry | undefined;
  /**
   * Compiles a `schedule:` (cron.ts, which loads croner — an npm package, whose first load sets up Deno's
   * npm layer: ms that a job without a schedule does not pay). Without one, a job with a schedule throws
   * CronNotLoaded, and the caller loads cron.ts and checks again.
   */
  compileCron?: CronCompiler | undefined;
  /**
   * A webhook trigger's input template's problem, or null (trigger_inputs.ts, which the daemon renders
   * deliveries with). Without it, a job with trigger inputs throws TriggerCheckNotLoaded, and the caller
   * loads it and checks again: a job without triggers does not load it.
   */
  checkTriggerTemplate?: ((template: string) => string | null) | undefined;
}

/** Throws when `schema` does not compile; an error's `at` names the key inside the schema that is wrong. */
export type SchemaCompiler = (schema: Record<string, unknown>) => unknown;

/**
 * `file:line:col: output.schema…: not a usable JSON Schema: …`, or null when it compiles. The turn that
 * checks an answer words a refusal the same (output_schema_check.ts).
 */
export function schemaProblem(
  schema: Record<string, unknown>,
  compile: SchemaCompiler,
  locate: Locate,
): string | null {
  try {
    compile(schema);
    return null;
  } catch (error) {
    const at = (error as { at?: unknown }).at;
    const path = ["output", "schema", ...(Array.isArray(at) ? at : [])];
    return `${locate(path)}: ${keyPath(path)}: not a usable JSON Schema: ${(error as Error).message}`;
  }
}

/** A job has a `schedule:` and its check was given no cron compiler (CheckContext.compileCron). */
export class CronNotLoaded extends Error {
  constructor() {
    super("the schedule check (croner) is not loaded");
  }
}

/** A job has webhook trigger inputs and its check was given no template check (CheckContext.checkTriggerTemplate). */
export class TriggerCheckNotLoaded extends Error {
  constructor() {
    super("the trigger inputs' check (trigger_inputs.ts) is not loaded");
  }
}

export function jobProblems(spec: JobFile, context: CheckContext): string[] {
  const problems: string[] = [];
  const at = (path: (string | number)[], message: string) =>
    problems.push(`${context.locate(path)}: ${keyPath(path)}: ${message}`);
  if (spec.schedule) {
    if (!context.compileCron) throw new CronNotLoaded();
    try {
      context.compileCron(spec.schedule, (key) => `${context.locate(["schedule", key])}: schedule.${key}`);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      problems.push(error.message);
    }
  }
  const schema = spec.output?.schema;
  const refused = schema && context.compileSchema
    ? schemaProblem(schema, context.compileSchema, context.locate)
    : null;
  if (refused !== null) problems.push(refused);
  const registry: ProviderRegistry = context.providers ?? PROVIDERS;
  const provider = providerOf(spec.model, registry);
  for (const [key, holds] of Object.entries(registry[provider]?.needs ?? {})) {
    if ((spec.model as Record<string, unknown> | undefined)?.[key] === undefined) {
      at(["model", "provider"], `provider ${provider} needs model.${key} (${holds})`);
    }
  }
  for (const { key, problem } of registry[provider]?.problems?.(spec.model ?? {}) ?? []) {
    at(["model", key], problem);
  }
  const fromConfig = context.configPlugins ?? 0;
  spec.plugins?.forEach((entry, i) => {
    const path = resolve(context.dir, entry.path);
    if (existsSync(path, { follow: true })) return;
    if (i < fromConfig) {
      problems.push(`config.yaml: plugins[${i}].path: no such file or directory "${entry.path}"`);
    } else at(["plugins", i - fromConfig, "path"], `no such file or directory "${entry.path}" (${path})`);
  });
  const file = spec.output?.file;
  if (file !== undefined) {
    // Before substitution only the text up to the first template is known; its directory part must stay in.
    const literal = context.templated && file.includes("{{") ? file.slice(0, file.indexOf("{{")) : file;
    const known = context.templated && file.includes("{{")
      ? literal.slice(0, literal.lastIndexOf("/") + 1)
      : literal;
    // The write roots a job grants may hold it too (run_job checks the real path again before any call).
    const sandbox = spec.tools?.shell?.sandbox;
    const roots = [
      ...(spec.tools?.write_file?.paths ?? []),
      ...(sandbox && sandbox !== "off" ? sandbox.write ?? [] : []),
    ].map((root) => resolve(context.dir, root));
    const target = resolve(context.dir, known);
    if (known !== "" && escapes(context.dir, known) && roots.every((root) => escapes(root, target))) {
      at(["output", "file"], `"${file}" is outside the job directory ${context.dir} and every write root`);
    }
    if (insideGit(known)) {
      at(["output", "file"], `"${file}" is inside a .git directory, whose config and hooks run programs`);
    }
  }
  const declared = Object.keys(spec.inputs ?? {});
  const triggerInputs = Object.entries(spec.triggers?.webhook?.inputs ?? {});
  const checkTemplate = context.checkTriggerTemplate;
  if (triggerInputs.length > 0 && !checkTemplate) throw new TriggerCheckNotLoaded();
  for (const [name, template] of triggerInputs) {
    const path = ["triggers", "webhook", "inputs", name];
    if (!declared.includes(name)) {
      at(path, `"${name}" is not one of the job's inputs (declared: ${declared.join(", ") || "none"})`);
    }
    const problem = checkTemplate!(template);
    if (problem !== null) at(path, problem);
  }
  return problems;
}

/** Throws every problem of `spec` at once. */
export function assertRunnable(spec: JobFile, context: CheckContext): void {
  const problems = jobProblems(spec, context);
  if (problems.length > 0) throw new JobProblems(problems);
}

function escapes(dir: string, path: string): boolean {
  const rel = relative(dir, resolve(dir, path));
  return rel === ".." || rel.startsWith("../") || isAbsolute(rel);
}
