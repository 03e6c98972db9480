/**
 * `deno task docs`: rewrites the generated blocks of docs/ — job keys (the job schema's descriptions), the
 * CLI (commands/_flags.ts), the result and the events (schemas/), hook payloads — from their definitions. `--check` writes nothing and exits
 * 1 naming each stale page (tests/repo/docs_test.ts runs the same comparison).
 */
import { formatted, generatedPages } from "./docs/generate.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const check = Deno.args.includes("--check");
const pages = await formatted(await generatedPages(ROOT));
let stale = 0;
for (const page of pages) {
  if (page.generated === page.committed) continue;
  stale++;
  if (check) console.error(`${page.path} is stale: run deno task docs`);
  else {
    await Deno.writeTextFile(`${ROOT}/${page.path}`, page.generated);
    console.error(`wrote ${page.path}`);
  }
}
if (check && stale > 0) Deno.exit(1);
