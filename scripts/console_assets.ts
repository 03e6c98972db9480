/**
 * Writes runtime/http/console/_generated/assets.ts: the files the web console serves under /assets/, as
 * string constants, so the program carries them (from source, in `deno compile` and in the release bundle
 * alike: no file is read at run time, no CDN, no Node build step). Two come from npm, at the versions
 * deno.json pins (htmx for the live parts, uPlot for charts); the console's own stylesheet and script come
 * from runtime/http/console/static/.
 *
 * Run by `deno task generate`; `--check` (and runtime/http/console/assets_test.ts) fail when it is stale: when
 * a package's locked version or integrity, a static file or this generator changed (scripts/_generated.ts).
 */
import { generatedHeader, generatorText, inputsDigest, lockedPackage, recordedInputs } from "./_generated.ts";

interface Asset {
  /** The name it is served under (/assets/NAME). */
  name: string;
  type: string;
  /** Where it comes from: a file of an npm package deno.json pins, or one of the console's own. */
  from: { npm: string; file: string } | { static: string };
}

export const CONSOLE_ASSETS: readonly Asset[] = [
  { name: "htmx.min.js", type: "text/javascript", from: { npm: "htmx.org", file: "dist/htmx.min.js" } },
  { name: "uplot.min.js", type: "text/javascript", from: { npm: "uplot", file: "dist/uPlot.iife.min.js" } },
  { name: "uplot.min.css", type: "text/css", from: { npm: "uplot", file: "dist/uPlot.min.css" } },
  { name: "console.css", type: "text/css", from: { static: "console.css" } },
  { name: "console.js", type: "text/javascript", from: { static: "console.js" } },
  { name: "cost_chart.js", type: "text/javascript", from: { static: "cost_chart.js" } },
];

export const ASSETS_OUT = new URL("../runtime/http/console/_generated/assets.ts", import.meta.url);
const STATIC_DIR = new URL("../runtime/http/console/static/", import.meta.url);
const CONFIG = new URL("../deno.json", import.meta.url);

/** The pinned specifier (`npm:NAME@VERSION`) deno.json maps `name` to. */
async function pinned(name: string): Promise<string> {
  const imports =
    (JSON.parse(await Deno.readTextFile(CONFIG)) as { imports: Record<string, string> }).imports;
  const specifier = imports[name];
  if (!specifier?.startsWith("npm:")) throw new Error(`deno.json imports no npm package "${name}"`);
  return specifier;
}

/** The folder the npm package `specifier` is cached in (downloading it when it is not yet). */
async function packageDir(specifier: string): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", specifier],
    cwd: new URL("..", import.meta.url),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) throw new Error(`deno info ${specifier} failed: ${new TextDecoder().decode(stderr)}`);
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    npmPackages: Record<string, { name: string; version: string; localPath?: string }>;
  };
  const [name, version] = specifier.slice(4).split(/(?<=.)@/);
  const found = Object.values(info.npmPackages).find((p) => p.name === name && p.version === version);
  if (!found?.localPath) throw new Error(`deno info ${specifier} names no local copy of the package`);
  return found.localPath;
}

const BUDGET =
  "the release is one file (dist/hermes.js) that must serve the console offline, with no CDN and " +
  "no file read beside it: the assets ride inside the program (htmx 2.0.11 min 52 KB, uPlot 1.6.32 min 51 KB).";

/** The text of each asset, by its name. */
async function assetTexts(): Promise<{ asset: Asset; source: string; body: string }[]> {
  const texts = [];
  for (const asset of CONSOLE_ASSETS) {
    if ("npm" in asset.from) {
      const specifier = await pinned(asset.from.npm);
      const body = await Deno.readTextFile(`${await packageDir(specifier)}/${asset.from.file}`);
      texts.push({ asset, source: `${specifier}/${asset.from.file}`, body });
    } else {
      const body = await Deno.readTextFile(new URL(asset.from.static, STATIC_DIR));
      texts.push({ asset, source: `runtime/http/console/static/${asset.from.static}`, body });
    }
  }
  return texts;
}

/** The digest of what decides the module: the packages' locked versions and integrity, the static files, this generator. */
export async function consoleAssetsInputs(): Promise<string> {
  const parts = [await generatorText(import.meta.url)];
  for (const asset of CONSOLE_ASSETS) {
    if ("npm" in asset.from) {
      const { version, integrity } = await lockedPackage(asset.from.npm);
      parts.push(asset.name, asset.from.npm, version, integrity, asset.from.file);
    } else {
      parts.push(asset.name, await Deno.readTextFile(new URL(asset.from.static, STATIC_DIR)));
    }
  }
  return await inputsDigest(parts);
}

/** Whether the module on disk was generated from today's inputs. */
export async function isCurrent(): Promise<boolean> {
  const text = await Deno.readTextFile(ASSETS_OUT).catch(() => "");
  return recordedInputs(text) === await consoleAssetsInputs();
}

/** The module's text. */
export async function generateConsoleAssets(): Promise<string> {
  const texts = await assetTexts();
  const lines = [
    generatedHeader({
      generator: "scripts/console_assets.ts",
      source: texts.map((t) => t.source).join(", "),
      budget: BUDGET,
      inputs: await consoleAssetsInputs(),
    }),
    "",
    "/** A file the console serves under /assets/. */",
    "export interface ConsoleAsset { type: string; body: string }",
    "",
    "export const ASSETS: Readonly<Record<string, ConsoleAsset>> = {",
  ];
  for (const { asset, source, body } of texts) {
    lines.push(`  // ${source}`);
    lines.push(
      `  ${JSON.stringify(asset.name)}: { type: ${JSON.stringify(asset.type)}, body: ${
        JSON.stringify(body)
      } },`,
    );
  }
  lines.push("};", "");
  return lines.join("\n");
}

if (import.meta.main) {
  if (Deno.args.includes("--check")) {
    if (!await isCurrent()) {
      console.error(`${ASSETS_OUT.pathname} stale: run \`deno task generate\``);
      Deno.exit(1);
    }
  } else {
    const text = await generateConsoleAssets();
    await Deno.mkdir(new URL(".", ASSETS_OUT), { recursive: true });
    await Deno.writeTextFile(ASSETS_OUT, text);
    console.log(ASSETS_OUT.pathname);
  }
}
