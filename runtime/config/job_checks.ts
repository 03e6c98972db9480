/**
 * What `run` and `daemon` would refuse in a valid-looking job, checked before any model call: a cron
 * expression or time zone croner rejects, a provider without a `model` key it needs, a plugin path that
 * does not exist, an `output.file` outside the job directory, an `output.schema` that does not compile
 * (output_schema_check.ts). Used by loadJob / jobFromObject, so `validate`, RPC `job.validate`, `run` and
 * the daemon refuse the same.
 */
import { insideGit } from "../core/protected_paths.ts";
import { isAbsolute, relative, resolve } from "../core/path.ts";
import { Cron } from "croner";
import { ValidationError } from "../core/errors.ts";
import type { JobFile, ScheduleConfig } from "./job_schema.ts";
import { keyPath } from "../core/key_path.ts";
import { providerOf, type ProviderRegistry, PROVIDERS } from "../providers/registry.ts";
import { outputSchemaProblem, type SchemaCompiler } from "./output_schema_check.ts";
import { existsSync } from "../core/fs.ts";
import { triggerTemplateProblem } from "./trigger_inputs.ts";

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
}

export function jobProblems(spec: JobFile, context: CheckContext): string[] {
  const problems: string[] = [];
  const at = (path: (string | number)[], message: string) =>
    problems.push(`${context.locate(path)}: ${keyPath(path)}: ${message}`);
  if (spec.schedule) {
    try {
      compileCron(spec.schedule, (key) => `${context.locate(["schedule", key])}: schedule.${key}`);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      problems.push(error.message);
    }
  }
  const schemaProblem = context.compileSchema
    ? outputSchemaProblem(spec, context.compileSchema, context.locate)
    : null;
  if (schemaProblem !== null) problems.push(schemaProblem);
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
  for (const [name, template] of Object.entries(spec.triggers?.webhook?.inputs ?? {})) {
    const path = ["triggers", "webhook", "inputs", name];
    if (!declared.includes(name)) {
      at(path, `"${name}" is not one of the job's inputs (declared: ${declared.join(", ") || "none"})`);
    }
    const problem = triggerTemplateProblem(template);
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

/** croner, 5 fields or 6 with seconds, in the schedule's IANA time zone; `where(key)` prefixes errors. */
export function compileCron(schedule: ScheduleConfig, where: (key: "cron" | "timezone") => string): Cron {
  const timezone = schedule.timezone ?? null;
  if (timezone !== null) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: timezone });
    } catch {
      throw new ValidationError(
        `${where("timezone")}: unknown time zone "${timezone}" (expected an IANA name like Europe/Paris)`,
      );
    }
  }
  try {
    return new Cron(schedule.cron, { mode: "5-or-6-parts", ...(timezone ? { timezone } : {}) });
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, "");
    throw new ValidationError(
      `${
        where("cron")
      }: invalid cron "${schedule.cron}": ${reason} (expected 5 fields, or 6 with seconds first)`,
    );
  }
}
