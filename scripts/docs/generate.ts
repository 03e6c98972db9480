/**
 * Which page holds which generated block, and the pages as `deno task docs` would write them. The docs test
 * compares these with the committed pages, so a key, flag, event field or hook added without regenerating
 * fails CI.
 */
import { replaceBlock } from "./markdown.ts";
import { configKeysMarkdown, jobKeysMarkdown } from "./job_keys.ts";
import { cliMarkdown } from "./cli.ts";
import { eventReference, eventsMarkdown } from "./events.ts";
import { hookReference, hooksMarkdown } from "./hooks.ts";
import { resultMarkdown } from "./result.ts";

interface Block {
  page: string;
  name: string;
  render(root: string): string | Promise<string>;
}

const BLOCKS: readonly Block[] = [
  { page: "docs/job-file.md", name: "job-keys", render: jobKeysMarkdown },
  { page: "docs/job-file.md", name: "config-keys", render: configKeysMarkdown },
  { page: "docs/cli.md", name: "cli", render: cliMarkdown },
  { page: "docs/result.md", name: "result", render: resultMarkdown },
  {
    page: "docs/events.md",
    name: "events",
    render: async (root) => eventsMarkdown(await eventReference(root)),
  },
  {
    page: "docs/plugins.md",
    name: "hooks",
    render: async (root) => hooksMarkdown(await hookReference(root)),
  },
];

export interface GeneratedPage {
  path: string;
  committed: string;
  generated: string;
}

/** Every page with generated blocks: its committed text and the text with the blocks regenerated. */
export async function generatedPages(root: string): Promise<GeneratedPage[]> {
  const pages = new Map<string, GeneratedPage>();
  for (const block of BLOCKS) {
    let page = pages.get(block.page);
    if (!page) {
      const committed = await Deno.readTextFile(`${root}/${block.page}`);
      page = { path: block.page, committed, generated: committed };
      pages.set(block.page, page);
    }
    page.generated = replaceBlock(page.generated, block.name, await block.render(root), block.page);
  }
  return [...pages.values()];
}

/** Formats pages as `deno fmt` would, so the committed pages pass `deno fmt --check`. */
export async function formatted(pages: GeneratedPage[]): Promise<GeneratedPage[]> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-docs-" });
  try {
    const files = pages.map((page, i) => ({ page, file: `${dir}/${i}.md` }));
    for (const { page, file } of files) await Deno.writeTextFile(file, page.generated);
    const fmt = await new Deno.Command(Deno.execPath(), {
      args: ["fmt", "--quiet", "--line-width", "110", ...files.map((f) => f.file)],
      stdout: "null",
      stderr: "inherit",
    }).output();
    if (!fmt.success) throw new Error("Cannot format the generated docs: deno fmt failed");
    return await Promise.all(
      files.map(async ({ page, file }) => ({ ...page, generated: await Deno.readTextFile(file) })),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
