/**
 * Writes the npm packages the program loads at start as one ES module each, bundled from the package's own
 * ES modules (same package, same pinned version, same code):
 *
 * - runtime/core/_generated/yaml.js, npm:yaml. Imported as `yaml`, Deno resolves the package's "node"
 *   export, its CommonJS build: some 80 files through Deno's CommonJS loader, about twice a bare `deno run`
 *   hello-world before a job file can even be parsed; this module loads in about 2 ms.
 * - runtime/providers/_generated/openai.js, npm:openai. Its client imports every API resource, some 115
 *   modules that Deno reads, looks up in its code cache and instantiates one by one before the first model
 *   request: about 35 ms of CPU, against 10 ms for the one module.
 *
 * Run by `deno task generate`; `--check` (and each module's test) fail when a file is stale: when the package's
 * version or integrity in deno.lock, or this generator, changed since it was written (scripts/_generated.ts).
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedHeader, generatorText, inputsDigest, lockedPackage, recordedInputs } from "./_generated.ts";

interface NpmModule {
  /** The package, as deno.json names it. */
  name: string;
  /** Where the module is written. */
  out: URL;
  /** The measured budget that needs the module (its header says it). */
  budget: string;
  /** The entry module's text, given the path of the package's resolved entry. */
  entry(resolved: string): string;
  /** Make its top-level functions compile with the module (eagerTopLevelFunctions). */
  eager?: boolean;
}

export const NPM_MODULES = {
  yaml: {
    name: "yaml",
    out: new URL("../runtime/core/_generated/yaml.js", import.meta.url),
    budget: "start-up of every command that reads YAML (bench/startup_bench.ts): the package's CommonJS " +
      "entry loads some 80 files through Deno's CommonJS loader, about twice a bare `deno run` hello-world; " +
      "this module loads in about 2 ms.",
    // dist/index.js is the CommonJS entry; the ES module build of the same sources sits beside it.
    entry: (resolved) =>
      `export * from ${JSON.stringify(`${dirname(dirname(resolved))}/browser/index.js`)};\n`,
    // A job file's first parse compiled the composer's functions at their first call: ~1.5 ms of each start.
    eager: true,
  },
  openai: {
    name: "openai",
    out: new URL("../runtime/providers/_generated/openai.js", import.meta.url),
    budget: "`hermes run` spawn to first model request from the source (bench/startup_bench.ts, ≤ 5× a " +
      "hello-world; the release bundles the package's modules either way): importing the SDK and making a " +
      "client took 61 ms of CPU through the package's ~115 modules, 46 ms through this one (hello-world: 21 ms).",
    // `export *` leaves out the default export (the client class).
    entry: (resolved) =>
      `export * from ${JSON.stringify(resolved)};\nexport { default } from ${JSON.stringify(resolved)};\n`,
  },
} as const satisfies Record<string, NpmModule>;

/** The module's text. */
export async function generateNpmModule(module: NpmModule): Promise<string> {
  const resolved = fileURLToPath(import.meta.resolve(module.name));
  const work = await Deno.makeTempDir({ prefix: `hermes-${module.name}-module-` });
  try {
    await Deno.writeTextFile(`${work}/entry.js`, module.entry(resolved));
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--no-config",
        "--no-lock",
        "--platform",
        "deno",
        "-o",
        `${work}/out.js`,
        `${work}/entry.js`,
      ],
      cwd: work,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (code !== 0) throw new Error(`deno bundle failed: ${new TextDecoder().decode(stderr)}`);
    // The bundler names each source by its path from the output: keep only the path inside the package, so
    // the text does not depend on where this machine's DENO_DIR is.
    const inPackage = new RegExp(`^// .*?/${module.name}/(\\d[^/]*)/`, "gm");
    const bundled = (await Deno.readTextFile(`${work}/out.js`)).replace(inPackage, `// ${module.name}@$1/`);
    const text = "eager" in module && module.eager ? eagerTopLevelFunctions(bundled) : bundled;
    const { version } = await lockedPackage(module.name);
    const header = generatedHeader({
      generator: "scripts/npm_modules.ts",
      source: `npm:${module.name}@${version}`,
      budget: module.budget,
      inputs: await npmModuleInputs(module),
    });
    return `${header}\n${text}`;
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

/**
 * The bundle with each top-level function declaration that nothing names before it made a parenthesised
 * function expression (`var f = (function f(…) {…});`), which V8 compiles with the module, so its bytecode
 * is in the code cache Deno stores then; a declaration is compiled at its first call, by every process.
 * A function named earlier in the text (a use that may rely on hoisting) stays a declaration. Class methods
 * (the lexer's, the parser's) have no such form: they stay compiled on first use.
 */
export function eagerTopLevelFunctions(text: string): string {
  const lines = text.split("\n");
  const declaration = /^function (\w+)\(/;
  for (const [i, line] of lines.entries()) {
    const name = declaration.exec(line)?.[1];
    if (name === undefined) continue;
    const named = new RegExp(`(^|[^\\w$.])${name}(?![\\w$])`);
    if (lines.findIndex((other) => named.test(other)) !== i) continue;
    // Its end: the first line that is a closing brace alone. A line between that is not indented (a
    // template literal's) leaves the end unsure: the function then stays as it is.
    const end = lines.findIndex((other, j) => j > i && other === "}");
    if (end === -1 || lines.slice(i + 1, end).some((other) => /^\S/.test(other))) continue;
    lines[i] = `var ${name} = (${line}`;
    lines[end] = "});";
  }
  return lines.join("\n");
}

/** The digest of what decides the module: the package's locked version and integrity, and this generator. */
export async function npmModuleInputs(module: NpmModule): Promise<string> {
  const { version, integrity } = await lockedPackage(module.name);
  return inputsDigest([await generatorText(import.meta.url), module.name, version, integrity]);
}

/** Whether the module on disk was generated from today's inputs. */
export async function isCurrent(module: NpmModule): Promise<boolean> {
  const text = await Deno.readTextFile(module.out).catch(() => "");
  return recordedInputs(text) === await npmModuleInputs(module);
}

if (import.meta.main) {
  const stale: string[] = [];
  for (const module of Object.values(NPM_MODULES)) {
    if (Deno.args.includes("--check")) {
      if (!await isCurrent(module)) stale.push(module.out.pathname);
    } else {
      const text = await generateNpmModule(module);
      await Deno.mkdir(new URL(".", module.out), { recursive: true });
      await Deno.writeTextFile(module.out, text);
      console.log(module.out.pathname);
    }
  }
  if (stale.length) {
    console.error(`${stale.join(", ")} stale: run \`deno task generate\``);
    Deno.exit(1);
  }
}
