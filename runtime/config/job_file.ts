/**
 * Loading job files and config.yaml (DESIGN §3): YAML with positions → zod validation → resolveJob. Every
 * error names file:line:col and exits 2. Importing this module loads yaml and zod: import it lazily on paths
 * that may not need it.
 */
import { dirname, resolve } from "node:path";
import type { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import { type LoadJobOptions, type ResolvedJob, resolveJob } from "./job.ts";
import { JobFile, UserConfig } from "./job_schema.ts";
import { describeIssue, offsetOf, position } from "./_yaml_positions.ts";
import { entryRelativeTo } from "./plugin_entry.ts";
import { parseYamlSource, type YamlSource } from "./yaml_source.ts";

function validate<T extends z.ZodType>(schema: T, file: string, parsed: YamlSource): z.infer<T> {
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
  const locate = (keyPath: (string | number)[]) =>
    `${path}:${position(parsed.lines, offsetOf(parsed.doc, keyPath))}`;
  return resolveJob(spec, { ...options, path: absolute, dir: dirname(absolute), file: path, locate });
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
