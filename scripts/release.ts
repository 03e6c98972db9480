/**
 * `deno task release [--out DIR]`: the release artifact — the folder `DIR/hermes/` (default dist/hermes/)
 * of ES modules made by `deno bundle --code-splitting`, which runs with any Deno 2.9 and an empty DENO_DIR:
 * `deno run -A hermes/hermes.js …`. The commit it was built from is embedded (what `hermes --version`
 * prints), and `hermes/SHA256SUMS` lists every file in `sha256sum` format, so `sha256sum -c SHA256SUMS` in
 * the folder checks a download.
 *
 * A folder, not one file: a one-file bundle hoists every `node:` import of the whole program to its top, so
 * each start initialised Deno's Node layer for streams, http, zlib, crypto, child_process, … before
 * `--version` could print (3.6× the source's start-up). Split at the program's `import()` seams, each command
 * loads what it loads from the source (bench/startup_bench.ts).
 *
 * A chunk's literal dynamic import of another chunk is wrapped as `import(String(specifier))`: Deno reads, parses and resolves
 * every module a literal `import()` names before the program starts, unless `lazy-dynamic-imports` is on —
 * which deno.json turns on for the source, but a release runs wherever it is put, without that deno.json. A
 * specifier Deno cannot read ahead is loaded when the import runs (--version: 1.6× less CPU than with them).
 */
import { parseArgs } from "node:util";
import { createHash } from "node:crypto";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const MARKER = "__HERMES_COMMIT__";
/** The entry module, as `deno bundle` names it (after main.ts), and as the release names it. */
const BUNDLED_ENTRY = "main.js";
const ENTRY = "hermes.js";
/** An `import()` of another module of the bundle, as `deno bundle` writes it. */
const CHUNK_IMPORT = /import\("(\.\/[\w.-]+\.js)"\)/g;

const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } } });
const folder = `${values.out ?? `${ROOT}/dist`}/hermes`;
// The folder is the release's own: a chunk of an earlier build must not survive into this one.
await Deno.remove(folder, { recursive: true }).catch((error) => {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
});

// Minified, names kept (error and class names are part of what Hermes prints): Deno reads and V8 compiles
// (or loads the code cache of) each module a command imports, so smaller modules start faster.
const built = await new Deno.Command(Deno.execPath(), {
  args: [
    "bundle",
    "--code-splitting",
    "--platform",
    "deno",
    "--minify",
    "--keep-names",
    "--outdir",
    folder,
    `${ROOT}/main.ts`,
  ],
  cwd: ROOT,
  stdout: "inherit",
  stderr: "inherit",
}).output();
if (!built.success) Deno.exit(built.code || 1);

const names = [...Deno.readDirSync(folder)].filter((e) => e.isFile).map((e) => e.name).sort();
const commit = await gitCommit();
let marked = 0;
for (const name of names) {
  const text = await Deno.readTextFile(`${folder}/${name}`);
  // The entry is renamed below: nothing may import it by the bundler's name.
  if (name !== BUNDLED_ENTRY && text.includes(`"./${BUNDLED_ENTRY}"`)) {
    fail(`${name} imports the entry module ./${BUNDLED_ENTRY}, which the release renames to ${ENTRY}`);
  }
  const lazy = text.replace(CHUNK_IMPORT, 'import(String("$1"))');
  if (/import\(\s*["'`]\./.test(lazy)) {
    fail(`${name} has an import() of a chunk in a form this script does not rewrite`);
  }
  if (lazy.includes(MARKER)) marked++;
  await Deno.writeTextFile(`${folder}/${name}`, lazy.replaceAll(MARKER, commit));
}
if (marked === 0) fail(`the commit marker ${MARKER} is in no module of the bundle (runtime/core/version.ts)`);
await Deno.rename(`${folder}/${BUNDLED_ENTRY}`, `${folder}/${ENTRY}`);

const files = names.map((name) => name === BUNDLED_ENTRY ? ENTRY : name).sort();
let sums = "";
for (const name of files) {
  const digest = createHash("sha256").update(await Deno.readFile(`${folder}/${name}`)).digest("hex");
  sums += `${digest}  ${name}\n`;
}
await Deno.writeTextFile(`${folder}/SHA256SUMS`, sums);
const digest = createHash("sha256").update(sums).digest("hex");
console.log(
  `${folder}/${ENTRY} (${commit || "no commit: not a git checkout"}): ${files.length} modules\n` +
    `${digest}  SHA256SUMS`,
);

function fail(message: string): never {
  console.error(`release: ${message}`);
  Deno.exit(1);
}

/** HEAD's short commit, `-dirty` when tracked files differ from it; "" outside a git checkout. */
async function gitCommit(): Promise<string> {
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "null" }).output()
      .then((o) => o.success ? new TextDecoder().decode(o.stdout).trim() : null)
      .catch(() => null);
  const head = await git("rev-parse", "--short=12", "HEAD");
  if (!head) return "";
  const changes = await git("status", "--porcelain", "--untracked-files=no");
  return changes ? `${head}-dirty` : head;
}
