/**
 * A test case file (`*.test.yaml`): a job, its inputs, where the model's answers come from (a recorded
 * `cassette` or scripted `replies`) and what the run must show (`expect`). Checked with zod; a problem is one
 * `file:line:col` line (exit 2), like a job file's.
 */
import { z } from "zod";
import { ValidationError } from "../../runtime/core/errors.ts";
import { parseYamlSource } from "../../runtime/core/yaml_source.ts";
import { describeIssue, offsetOf } from "../../runtime/core/yaml_positions.ts";
import { ScriptEntrySchema } from "../../runtime/providers/script.ts";
import { dirname, resolve } from "../../runtime/core/path.ts";

const Patterns = z.union([z.string(), z.array(z.string()).min(1)]);

/** A tool call the run must (or must not) make: a name, or a name and patterns its arguments must match. */
const ToolMatch = z.union([
  z.string().min(1),
  z.strictObject({
    tool: z.string().min(1),
    args: z.record(z.string(), z.unknown()).describe(
      "Each argument: a string is a regular expression its text must match; anything else must be equal",
    ).optional(),
  }),
]);

const FileExpectation = z.strictObject({
  exists: z.boolean().optional(),
  contains: Patterns.optional(),
  matches: Patterns.optional(),
});

export const Expect = z.strictObject({
  status: z.enum(["success", "failed", "limit", "interrupted"]).optional(),
  exit_code: z.number().int().optional(),
  terminal_reason: z.string().optional(),
  output: z.union([
    z.strictObject({ schema: z.record(z.string(), z.unknown()) }),
    z.strictObject({ match: z.unknown() }),
  ]).describe("schema: a JSON Schema the structured output must meet; match: a partial value it must contain")
    .optional(),
  final_contains: Patterns.optional(),
  final_matches: Patterns.optional(),
  tools_called: z.union([
    z.array(ToolMatch),
    z.strictObject({ calls: z.array(ToolMatch), ordered: z.boolean().optional() }),
  ]).optional(),
  tools_not_called: z.array(ToolMatch).optional(),
  max_steps: z.number().int().nonnegative().optional(),
  max_tokens: z.number().int().nonnegative().optional(),
  max_cost_usd: z.number().nonnegative().optional(),
  files: z.record(z.string(), FileExpectation).optional(),
});

export const CaseFile = z.strictObject({
  name: z.string().min(1).describe("The case's name in reports (default: the file's name)").optional(),
  description: z.string().optional(),
  job: z.string().min(1).describe("The job file, relative to this file"),
  inputs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  cassette: z.string().min(1).describe("A recorded run (hermes run --record) the model's answers come from")
    .optional(),
  tools: z.enum(["recorded", "live"]).describe("With a cassette: tool results from it (default) or run")
    .optional(),
  replies: z.array(ScriptEntrySchema).describe("Scripted replies the model's answers come from").optional(),
  expect: Expect.default({}),
  pass_rate: z.number().min(0).max(1).describe("With --live --repeat: the share of runs that must pass")
    .optional(),
}).refine((c) => !(c.cassette !== undefined && c.replies !== undefined), {
  message: "give cassette or replies, not both",
  path: ["cassette"],
});

export type CaseSpec = z.infer<typeof CaseFile>;
export type ExpectSpec = z.infer<typeof Expect>;
export type ToolMatchSpec = z.infer<typeof ToolMatch>;

export interface LoadedCase {
  /** The case file as given (relative paths stay relative in reports). */
  file: string;
  name: string;
  spec: CaseSpec;
  /** Absolute paths. */
  jobPath: string;
  cassettePath: string | undefined;
  /** The `line` of a key of the file (`expect.files`, `expect`), for annotations; 1 when it is not found. */
  lineOf(path: readonly (string | number)[]): number;
}

export function loadCase(file: string): LoadedCase {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    throw new ValidationError(`Cannot read test case "${file}": no such file`);
  }
  const source = parseYamlSource(file, text);
  if (source.value === null || typeof source.value !== "object" || Array.isArray(source.value)) {
    throw new ValidationError(`${file}:1:1: expected a mapping of keys (job, expect, …) at the top level`);
  }
  const parsed = CaseFile.safeParse(source.value);
  if (!parsed.success) {
    throw new ValidationError(
      describeIssue(file, source.doc, source.lines, CaseFile, parsed.error.issues[0]!),
    );
  }
  const dir = dirname(resolve(file));
  const spec = parsed.data;
  return {
    file,
    name: spec.name ?? file.replace(/^.*\//, "").replace(/\.test\.ya?ml$/, ""),
    spec,
    jobPath: resolve(dir, spec.job),
    cassettePath: spec.cassette !== undefined ? resolve(dir, spec.cassette) : undefined,
    lineOf: (path) => {
      for (let n = path.length; n > 0; n--) {
        const offset = offsetOf(source.doc, path.slice(0, n));
        if (offset > 0 || n === 1) return source.lines.linePos(offset).line;
      }
      return 1;
    },
  };
}
