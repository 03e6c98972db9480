/**
 * `deno task release [--out DIR]`: the release artifact — `DIR/hermes.js` (default dist/), one JavaScript
 * file made by `deno bundle` that runs with any Deno 2.9 and an empty DENO_DIR, with the commit it was built
 * from embedded (what `hermes --version` prints), and `DIR/hermes.js.sha256` in `sha256sum` format, so
 * `sha256sum -c hermes.js.sha256` checks a download.
 */
import { parseArgs } from "node:util";
import { createHash } from "node:crypto";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const MARKER = "__HERMES_COMMIT__";

const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } } });
const out = values.out ?? `${ROOT}/dist`;
await Deno.mkdir(out, { recursive: true });
const bundle = `${out}/hermes.js`;

// Minified, names kept (error and class names are part of what Hermes prints): 3.5 MB instead of 8.9 MB.
// Deno reads, hashes and keeps the whole file as a string, and V8 deserialises its code cache, at every
// start, so `hermes --version` from the bundle costs about a quarter less CPU (bench/startup_bench.ts).
const built = await new Deno.Command(Deno.execPath(), {
  args: ["bundle", "--platform", "deno", "--minify", "--keep-names", "-o", bundle, `${ROOT}/main.ts`],
  cwd: ROOT,
  stdout: "inherit",
  stderr: "inherit",
}).output();
if (!built.success) Deno.exit(built.code || 1);

const text = await Deno.readTextFile(bundle);
if (!text.includes(MARKER)) {
  console.error(`release: the commit marker ${MARKER} is not in the bundle (runtime/core/version.ts)`);
  Deno.exit(1);
}
const commit = await gitCommit();
await Deno.writeTextFile(bundle, text.replaceAll(MARKER, commit));
const digest = createHash("sha256").update(await Deno.readFile(bundle)).digest("hex");
await Deno.writeTextFile(`${bundle}.sha256`, `${digest}  hermes.js\n`);
console.log(`${bundle} (${commit || "no commit: not a git checkout"})\n${digest}  hermes.js`);

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
