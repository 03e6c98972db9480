/**
 * docs/ is the user's reference and is checked like code: the generated parts match their definitions
 * (`deno task docs`), every relative link resolves inside the repository, and every event type, exit code,
 * terminal reason, CLI flag, job key, result field, hook, RPC method and error code and layer folder the
 * program has is listed.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { formatted, generatedPages } from "../../scripts/docs/generate.ts";
import {
  cloneFiles,
  commentLinkProblems,
  headingAnchors,
  type LinkProblem,
  markdownLinkProblems,
} from "../../scripts/docs/links.ts";
import { eventReference } from "../../scripts/docs/events.ts";
import { terminalReasonsInCode } from "../../scripts/docs/reasons.ts";
import { jobKeyRows } from "../../scripts/docs/job_keys.ts";
import { hookReference } from "../../scripts/docs/hooks.ts";
import { resultFields } from "../../scripts/docs/result.ts";
import { COMMANDS, GLOBAL_FLAGS } from "../../commands/_flags.ts";
import { ExitCode } from "../../runtime/core/errors.ts";
import { LAYERS } from "../_testing/layers.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const read = (page: string) => Deno.readTextFile(join(ROOT, page));

async function files(dir: string, suffix: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string): Promise<void> => {
    for await (const entry of Deno.readDir(join(ROOT, path))) {
      const child = path ? `${path}/${entry.name}` : entry.name;
      if (entry.isDirectory) {
        if (!/^(\.|node_modules$|dist$)/.test(entry.name) && child !== ".hermes-demo") await walk(child);
      } else if (entry.name.endsWith(suffix)) found.push(child);
    }
  };
  await walk(dir);
  return found.sort();
}

const lines = (problems: LinkProblem[]) => problems.map((p) => `${p.file}:${p.line}: ${p.problem}`);

Deno.test("the generated parts of docs/ are up to date (run `deno task docs` after changing a definition)", async () => {
  const pages = await formatted(await generatedPages(ROOT));
  const stale = pages.filter((page) => page.generated !== page.committed).map((page) => page.path);
  assert.deepEqual(stale, [], `stale: ${stale.join(", ")} — run deno task docs`);
});

Deno.test("every relative link in README.md and docs/ names a file (and heading) of this repository", async () => {
  const pages = ["README.md", ...await files("docs", ".md")];
  assert.ok(pages.length > 10, "the docs pages were found");
  // What a fresh clone has: a link to an ignored file (a build output) is dead there.
  const clone = await cloneFiles(ROOT);
  const problems = (await Promise.all(pages.map((page) => markdownLinkProblems(ROOT, page, clone)))).flat();
  assert.deepEqual(lines(problems), []);
  const index = await read("docs/README.md");
  for (const page of pages.filter((p) => p.startsWith("docs/") && p !== "docs/README.md")) {
    assert.ok(index.includes(`](${page.slice("docs/".length)})`), `docs/README.md links ${page}`);
  }
});

Deno.test("every docs/ page named in a source comment exists", async () => {
  const sources = await files("", ".ts");
  assert.ok(sources.length > 100);
  const clone = await cloneFiles(ROOT);
  const problems = (await Promise.all(sources.map((file) => commentLinkProblems(ROOT, file, clone)))).flat();
  assert.deepEqual(lines(problems), []);
});

Deno.test("the link check refuses dead files, dead headings and links out of the repository, and passes good ones", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/docs`);
    await Deno.writeTextFile(`${dir}/docs/a.md`, "# A page\n\n## Store faults (`store.retry`)\n");
    await Deno.writeTextFile(
      `${dir}/README.md`,
      [
        "[good](docs/a.md) [anchor](docs/a.md#store-faults-storeretry) [self](#title) [dir](docs/)",
        "# Title",
        "`[not a link](nowhere.md)`",
        "```",
        "[in a fence](nowhere.md)",
        "```",
        "[dead](docs/b.md) [dead anchor](docs/a.md#store-faults) [out](../sibling/NOTES.md) [web](https://x.y/)",
      ].join("\n"),
    );
    await Deno.writeTextFile(
      `${dir}/x.ts`,
      '/** See docs/a.md and docs/gone.md. */\nconst s = "docs/also-gone.md";\n// docs/a.md#nope\n',
    );
    const problems = lines(await markdownLinkProblems(dir, "README.md"));
    assert.equal(problems.length, 4, problems.join("\n"));
    assert.match(problems[0]!, /^README\.md:7: docs\/b\.md: docs\/b\.md does not exist/);
    assert.match(problems[1]!, /has no heading #store-faults$/);
    assert.match(problems[2]!, /\.\.\/sibling\/NOTES\.md leads outside the repository/);
    assert.match(problems[3]!, /https:\/\/x\.y\/ leads outside the repository/);
    // In a git work tree, a file git ignores is not in a clone.
    await Deno.mkdir(`${dir}/dist`);
    await Deno.writeTextFile(`${dir}/dist/hermes.js`, "");
    await Deno.writeTextFile(`${dir}/.gitignore`, "dist/\n");
    await Deno.writeTextFile(`${dir}/docs/c.md`, "[built](../dist/hermes.js) [page](a.md)\n");
    const init = await new Deno.Command("git", { args: ["init", "-q"], cwd: dir }).output();
    assert.ok(init.success);
    const clone = await cloneFiles(dir);
    assert.ok(clone?.has("docs/a.md"));
    assert.deepEqual(lines(await markdownLinkProblems(dir, "docs/c.md", clone)), [
      "docs/c.md:1: ../dist/hermes.js: dist/hermes.js is not in the repository (ignored by git)",
    ]);
    assert.deepEqual(
      lines(await markdownLinkProblems(dir, "docs/c.md")),
      [],
      "without git, existence is enough",
    );
    const comments = lines(await commentLinkProblems(dir, "x.ts"));
    assert.deepEqual(comments, [
      "x.ts:1: docs/gone.md: docs/gone.md does not exist",
      "x.ts:3: docs/a.md#nope: docs/a.md has no heading #nope",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/events.md lists every event type and field", async () => {
  const reference = await eventReference(ROOT);
  const page = await read("docs/events.md");
  const anchors = headingAnchors(page);
  assert.ok(reference.events.length >= 20, "the event types were read");
  for (const event of reference.events) {
    assert.ok(page.includes(`### \`${event.type}\``), `docs/events.md lists ${event.type}`);
    assert.ok(anchors.has(event.type.replace(/\./g, "")));
    const section = page.split(`### \`${event.type}\``)[1]!.split("\n### ")[0]!;
    for (const field of event.fields) {
      assert.ok(section.includes(`\`${field.name}\``), `docs/events.md lists ${event.type}.${field.name}`);
    }
  }
});

Deno.test("docs/exit-codes.md lists every exit code and every terminal reason the code can end a run with", async () => {
  const page = await read("docs/exit-codes.md");
  for (const [name, code] of Object.entries(ExitCode)) {
    assert.match(page, new RegExp(`^\\| ${code} `, "m"), `exit code ${code} (${name}) has a row`);
  }
  const reasons = await terminalReasonsInCode(ROOT);
  for (const reason of ["provider_error", "max_turns", "stalled", "store_unavailable", "context_too_large"]) {
    assert.ok(reasons.has(reason), `the source scan finds ${reason}`);
  }
  const missing = [...reasons].filter(([reason]) => !new RegExp(`^\\| \`${reason}\` `, "m").test(page));
  assert.deepEqual(
    missing.map(([reason, where]) => `${reason} (${where})`),
    [],
    "terminal reasons without a row",
  );
});

Deno.test("docs/ lists every command and flag, job key, result field and hook", async () => {
  const cli = await read("docs/cli.md");
  for (const name of Object.keys(GLOBAL_FLAGS)) assert.ok(cli.includes(`\`--${name}\``), `--${name}`);
  for (const [command, def] of Object.entries(COMMANDS)) {
    const section = cli.split(`### \`hermes ${command}\``)[1]?.split("\n### ")[0];
    assert.ok(section !== undefined, `docs/cli.md has hermes ${command}`);
    for (const flag of Object.keys(def.flags)) {
      assert.ok(section.includes(`\`--${flag}\``), `docs/cli.md lists hermes ${command} --${flag}`);
    }
  }
  const jobFile = await read("docs/job-file.md");
  const rows = jobKeyRows();
  assert.ok(rows.length > 100);
  for (const row of rows) {
    assert.ok(jobFile.includes(`\`${row.path}\``), `docs/job-file.md lists ${row.path}`);
    assert.notEqual(
      row.description,
      "",
      `${row.path} has a .describe() text in runtime/config/job_schema.ts`,
    );
  }
  const result = await read("docs/result.md");
  for (const field of await resultFields(ROOT)) {
    assert.match(result, new RegExp(`^\\| \`${field}\` `, "m"), `docs/result.md lists ${field}`);
  }
  const plugins = await read("docs/plugins.md");
  const hooks = await hookReference(ROOT);
  assert.ok(hooks.length >= 9);
  for (const hook of hooks) {
    assert.ok(plugins.includes(`### \`${hook.name}\``), `docs/plugins.md has ${hook.name}`);
    assert.notEqual(hook.description, "", `${hook.name} in plugins/sdk.ts HookPayloads has a doc comment`);
  }
});

Deno.test("docs/architecture.md names every layered folder", async () => {
  const page = await read("docs/architecture.md");
  for (const folder of Object.keys(LAYERS)) {
    const path = folder === "main"
      ? "main.ts"
      : /^(commands|loops|plugins|scripts)$/.test(folder)
      ? `${folder}/`
      : `runtime/${folder}/`;
    assert.ok(page.includes(`\`${path}\``), `docs/architecture.md names ${path}`);
  }
});

Deno.test("nothing in the repository cites the contract or the tracker outside it (DESIGN §n, ../shared, issue N)", async () => {
  const texts = [
    ...await files("", ".ts"),
    ...await files("", ".md"),
    ...await files("", ".json"),
    ...await files("", ".yml"),
    ...await files("", ".yaml"),
  ]
    .filter((file) => file !== relative(ROOT, new URL(import.meta.url).pathname));
  const found: string[] = [];
  for (const file of texts) {
    const text = await read(file);
    for (const [index, line] of text.split("\n").entries()) {
      // The repository has no issue tracker of its own: a number would point nowhere.
      if (/DESIGN(\.md)? ?§|\/shared\/DESIGN|§\d|\b[Ii]ssues? #?\d+\b/.test(line)) {
        found.push(`${file}:${index + 1}: ${line.trim()}`);
      }
    }
  }
  assert.deepEqual(found, []);
});

Deno.test("docs/rpc.md lists every JSON-RPC method and error code", async () => {
  const { createMethods } = await import("../../runtime/rpc/methods.ts");
  const { ErrorCode } = await import("../../runtime/rpc/protocol.ts");
  // The table's names only: no handler is called, so the app is not needed.
  const methods = createMethods({
    app: {} as Parameters<typeof createMethods>[0]["app"],
    version: "",
    maxLineBytes: 0,
    shutdown: () => Promise.resolve(),
  });
  const page = await read("docs/rpc.md");
  assert.ok(methods.size >= 15);
  for (const name of methods.keys()) {
    assert.match(page, new RegExp(`^\\| \`${name}\` `, "m"), `method ${name}`);
  }
  for (const [name, code] of Object.entries(ErrorCode)) {
    assert.match(page, new RegExp(`^\\| ${code} `, "m"), `error code ${code} (${name})`);
  }
});
