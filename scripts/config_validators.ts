/**
 * Writes runtime/config/_generated/ (`deno task generate`, with scripts/npm_modules.ts): the job-file,
 * config.yaml and policy-file schemas (job_schema.ts, policy_schema.ts) compiled ahead of time with ajv's standalone code
 * generation. A run of a valid job file then checks it with plain functions instead of importing zod and
 * building its schemas (about twice a bare `deno run` hello-world). zod stays the source of truth and the
 * judge of every file these functions do not accept outright (its messages name the problem).
 *
 * The generated check may only be stricter than zod, never looser, and a value it accepts must be what zod
 * would return: so a refinement (which JSON Schema cannot state) makes its subschema refuse everything, and a
 * transform, default or unknown format stops the generation. `--check` exits 1 when a file is stale: when the
 * schema, ajv's locked version or this generator changed since it was written (scripts/_generated.ts).
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";
import { _ } from "ajv/dist/compile/codegen/index.js";
import { z } from "zod";
import { JobFile, UserConfig } from "../runtime/config/job_schema.ts";
import { PolicyConfig } from "../runtime/config/policy_schema.ts";
import { generatedHeader, generatorText, inputsDigest, lockedPackage, recordedInputs } from "./_generated.ts";

const OUT = new URL("../runtime/config/_generated/", import.meta.url);
const SCHEMAS = { job_file: JobFile, user_config: UserConfig, policy_file: PolicyConfig } as const;
const BUDGET =
  "`hermes run JOB.yaml` spawn to first model request (bench/startup_bench.ts): a valid file is " +
  "checked by plain functions instead of importing zod and building its schemas, which took about twice a bare " +
  "`deno run` hello-world.";

/** The generated modules' texts, by file name: one per schema, so a run loads only the one it checks. */
export async function generate(): Promise<Record<string, string>> {
  const entries = [];
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    entries.push([`${name}.js`, await generateOne(name, schema)] as const);
  }
  return Object.fromEntries(entries);
}

/** The files that were not generated from today's schemas, ajv and generator. */
export async function staleFiles(): Promise<string[]> {
  const stale = [];
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const text = await Deno.readTextFile(new URL(`${name}.js`, OUT)).catch(() => "");
    if (recordedInputs(text) !== await inputsOf(schema)) stale.push(`runtime/config/_generated/${name}.js`);
  }
  return stale;
}

/** The JSON Schema ajv compiles: zod's, for the input side, refinements refused. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
    override: refuseWhatJsonCannotSay,
  }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** The digest of what decides a module: the schema, ajv's locked version and integrity, and this generator. */
async function inputsOf(schema: z.ZodType): Promise<string> {
  const { version, integrity } = await lockedPackage("ajv");
  return inputsDigest([
    await generatorText(import.meta.url),
    // What ajv compiles: a description changes no generated code.
    JSON.stringify(withoutDescriptions(jsonSchemaOf(schema))),
    version,
    integrity,
  ]);
}

async function generateOne(name: string, schema: z.ZodType): Promise<string> {
  const ajv = new Ajv2020({
    code: {
      source: true,
      esm: true,
      lines: true,
      // zod's url(): what `new URL` parses, trimmed, without tabs or newlines (zod would strip those:
      // refused here, so zod decides and returns its own value).
      formats: _`{ uri: (s) => s === s.trim() && !/[\\t\\n\\r]/.test(s) && URL.canParse(s) }`,
    },
    // zod measures strings in UTF-16 code units, as `.length` does, and runs its patterns without the u flag.
    unicode: false,
    unicodeRegExp: false,
    strict: true,
    strictTypes: false,
    allErrors: false,
    // The same function, for compiling (the generated code refers to the one in code.formats above).
    formats: { uri: (s: string) => s === s.trim() && !/[\t\n\r]/.test(s) && URL.canParse(s) },
    logger: false,
  });
  const json = jsonSchemaOf(schema);
  ajv.addSchema({ ...withoutDescriptions(json), $id: name });
  return [
    generatedHeader({
      generator: "scripts/config_validators.ts",
      source: `the zod schema of ${name} (runtime/config/prechecked.ts uses it)`,
      budget: BUDGET,
      inputs: await inputsOf(schema),
      noCheck: true,
    }),
    eagerlyCompiled(withoutErrorDetails(standalone.default(ajv, { validate: name }))),
    `export const shape = ${JSON.stringify(shapeOf(json))};`,
    "",
  ].join("\n");
}

/**
 * ajv's standalone module with its validating function made a parenthesised function expression, which V8
 * compiles when the module is evaluated instead of at the first call. Deno stores a module's V8 code cache
 * once it is evaluated, so the function's bytecode is then in the cache; compiled at its first call, as a
 * declaration is, its ~200 KB were compiled again by every `hermes run` (~20 ms of CPU).
 */
function eagerlyCompiled(code: string): string {
  const lines = code.split("\n");
  const exported = /^export const validate = (validate\d+);$/;
  const at = lines.findIndex((line) => exported.test(line));
  const fn = at === -1 ? undefined : exported.exec(lines[at]!)![1]!;
  const start = lines.findIndex((line) => line.startsWith(`function ${fn}(`));
  const evaluated = lines.findIndex((line) => line.startsWith(`${fn}.evaluated = `));
  const functions = lines.filter((line) => line.startsWith("function ")).length;
  if (fn === undefined || start === -1 || functions !== 1 || lines[evaluated - 1] !== "}") {
    throw new Error("ajv's standalone code is not one exported function followed by its `.evaluated`");
  }
  lines[start] = lines[start]!.replace(`function ${fn}(`, `const ${fn} = (function ${fn}(`);
  lines[evaluated - 1] = "});";
  // The export moves after the function: a const is not hoisted as the declaration was.
  lines.splice(evaluated + 1, 0, lines[at]!);
  lines.splice(at, 1);
  return lines.join("\n");
}

/**
 * ajv's code with every error it builds an empty object: prechecked.ts reads only the verdict (a file it
 * refuses goes to zod, whose messages name the problem), and ajv's own control flow (anyOf, sub-schemas)
 * counts errors, never reads them. The error objects were half the module's ~280 KB, its load time with
 * them (the validator's bytecode is in the code cache, see eagerlyCompiled).
 */
function withoutErrorDetails(code: string): string {
  const stripped = code
    .replace(/^(validate\d+\.errors = )\[\{.*\}\];$/gm, "$1[{}];")
    .replace(/^(const err\d+ = )\{.*\};$/gm, "$1{};");
  // Anything left naming an error's fields is a form of ajv's output this does not know: stop rather than
  // ship a module whose errors are half stripped.
  const left = stripped.split("\n").filter((line) => /schemaPath|\bkeyword:/.test(line));
  if (left.length > 0) throw new Error(`ajv's standalone code builds errors in an unknown form: ${left[0]}`);
  if (/\.(keyword|instancePath|params|schemaPath|message)\b/.test(stripped)) {
    throw new Error("ajv's standalone code reads an error's fields: its errors cannot be emptied");
  }
  return stripped;
}

/** The schema without its `description`s: the generated code embeds the schema, and nothing reads them. */
function withoutDescriptions(value: unknown): Record<string, unknown> {
  const strip = (node: unknown, key?: string): unknown => {
    if (Array.isArray(node)) return node.map((item) => strip(item));
    if (node === null || typeof node !== "object") return node;
    // Inside `properties` the keys are property names: a property may be called "description".
    return Object.fromEntries(
      Object.entries(node).filter(([name]) => key === "properties" || name !== "description")
        .map(([name, sub]) => [name, strip(sub, name)]),
    );
  };
  return strip(value) as Record<string, unknown>;
}

/** A refinement cannot be said in JSON Schema: its subschema refuses everything, and zod decides. */
function refuseWhatJsonCannotSay(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const def =
    (ctx.zodSchema as { _zod: { def: { type: string; checks?: { _zod: { def: { check: string } } }[] } } })
      ._zod.def;
  if (["pipe", "transform", "default", "prefault", "catch"].includes(def.type)) {
    throw new Error(
      `the config schemas have a ${def.type}: a prechecked value would not be what zod returns`,
    );
  }
  if (def.checks?.some((check) => check._zod.def.check === "custom")) ctx.jsonSchema.not = {};
}

/**
 * What ordering a validated value needs: zod returns objects with the keys in the order of their schema, so
 * the prechecked value is rebuilt in that order. Only the structure is kept.
 */
function shapeOf(schema: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = {};
  if (typeof schema.$ref === "string") out.$ref = schema.$ref.replace(/^#\/\$defs\//, "");
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Record<string, unknown>>).map((
        [key, sub],
      ) => [key, shapeOf(sub)]),
    );
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
    out.additionalProperties = shapeOf(schema.additionalProperties as Record<string, unknown>);
  }
  if (schema.items && typeof schema.items === "object") {
    out.items = shapeOf(schema.items as Record<string, unknown>);
  }
  if (Array.isArray(schema.anyOf)) out.anyOf = schema.anyOf.map((sub) => shapeOf(sub));
  if (schema.type !== undefined) out.type = schema.type;
  if (schema.$defs) {
    out.$defs = Object.fromEntries(
      Object.entries(schema.$defs as Record<string, Record<string, unknown>>).map((
        [key, sub],
      ) => [key, shapeOf(sub)]),
    );
  }
  return out;
}

if (import.meta.main) {
  if (Deno.args.includes("--check")) {
    const stale = await staleFiles();
    if (stale.length) {
      console.error(`${stale.join(", ")} stale: run \`deno task generate\``);
      Deno.exit(1);
    }
  } else {
    for (const [file, text] of Object.entries(await generate())) {
      const url = new URL(file, OUT);
      await Deno.mkdir(OUT, { recursive: true });
      await Deno.writeTextFile(url, text);
      console.log(url.pathname);
    }
  }
}
