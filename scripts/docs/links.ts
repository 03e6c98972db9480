/**
 * Dead links: every relative link of the Markdown pages (README.md, docs/) must name a file of the
 * repository (and a heading of it, with `#anchor`), and every docs/ page a source comment names must exist.
 * Links that leave the repository (a `../` past its root, `https://…`) are refused too: a clone has only itself.
 */
import { dirname, join, normalize, relative } from "node:path";

export interface LinkProblem {
  file: string;
  line: number;
  problem: string;
}

/** GitHub's anchors of a page's headings (`## Store faults (`store.retry`)` → `store-faults-storeretry`). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of withoutFences(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The lines of a page with fenced code blocks blanked (their text is not Markdown). */
function withoutFences(markdown: string): string[] {
  let fence = false;
  return markdown.split("\n").map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      return "";
    }
    return fence ? "" : line;
  });
}

const LINK = /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/**
 * The files a clone of the repository at `root` has: tracked ones and new ones git does not ignore (so that
 * a page linking an ignored build output, `dist/…`, is refused). Undefined outside a git work tree.
 */
export async function cloneFiles(root: string): Promise<Set<string> | undefined> {
  const git = await new Deno.Command("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: root,
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => undefined);
  if (!git?.success) return undefined;
  return new Set(new TextDecoder().decode(git.stdout).split("\0").filter((path) => path !== ""));
}

/** Problems of the relative links in one Markdown file (`file` relative to `root`). */
export async function markdownLinkProblems(
  root: string,
  file: string,
  clone?: Set<string>,
): Promise<LinkProblem[]> {
  const text = await Deno.readTextFile(join(root, file));
  const problems: LinkProblem[] = [];
  const lines = withoutFences(text);
  for (const [index, raw] of lines.entries()) {
    const line = raw.replace(/`[^`]*`/g, (span) => " ".repeat(span.length));
    for (const match of line.matchAll(LINK)) {
      const problem = await targetProblem(root, file, match[1]!, clone);
      if (problem) problems.push({ file, line: index + 1, problem });
    }
  }
  return problems;
}

// A docs page or README anchor a comment names: `docs/compaction.md`, `docs/architecture.md#start-up`.
const COMMENT_LINK = /(?<![\w/.-])((?:docs\/[\w./-]+\.md|README\.md)(?:#[\w-]+)?)/g;
const COMMENT_LINE = /^\s*(\/\/|\/\*|\*)|\s\/\/\s/;

/** Problems of the docs/ pages named in the comments of one TypeScript file. */
export async function commentLinkProblems(
  root: string,
  file: string,
  clone?: Set<string>,
): Promise<LinkProblem[]> {
  const text = await Deno.readTextFile(join(root, file));
  const problems: LinkProblem[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (!COMMENT_LINE.test(line)) continue;
    const comment = line.slice(line.search(COMMENT_LINE));
    for (const match of comment.matchAll(COMMENT_LINK)) {
      // Comments name pages from the repository's root, as the rest of their paths do.
      const problem = await targetProblem(root, "x.md", match[1]!, clone);
      if (problem) problems.push({ file, line: index + 1, problem });
    }
  }
  return problems;
}

async function targetProblem(
  root: string,
  from: string,
  target: string,
  clone: Set<string> | undefined,
): Promise<string | null> {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    return `${target} leads outside the repository (a clone has only its own files; name the page in text)`;
  }
  const [path, anchor] = target.split("#", 2) as [string, string | undefined];
  const resolved = path === "" ? from : normalize(join(dirname(from), decodeURIComponent(path)));
  if (resolved.startsWith("..") || relative(root, join(root, resolved)).startsWith("..")) {
    return `${target} leads outside the repository`;
  }
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(join(root, resolved));
  } catch {
    return `${target}: ${resolved} does not exist`;
  }
  const inClone = (path: string) =>
    path === "." || clone!.has(path) ||
    [...clone!].some((file) => file.startsWith(`${path.replace(/\/$/, "")}/`));
  if (clone && !inClone(resolved)) return `${target}: ${resolved} is not in the repository (ignored by git)`;
  if (anchor === undefined || anchor === "" || !info.isFile || !resolved.endsWith(".md")) return null;
  const anchors = headingAnchors(await Deno.readTextFile(join(root, resolved)));
  return anchors.has(anchor) ? null : `${target}: ${resolved} has no heading #${anchor}`;
}
