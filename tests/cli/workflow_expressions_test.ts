/**
 * No documented or example workflow step pastes an expression into a shell script. GitHub substitutes
 * `${{ … }}` into a `run:` block's text before the shell reads it, so a step output (the model's `final`, a
 * pull request's title) becomes shell code; values go through `env:` and are read as `"$NAME"`. This scans
 * action.yml, examples/ (workflows and YAML), README.md and the YAML code fences of docs/ for `run:` blocks
 * holding `${{`.
 */
import assert from "node:assert/strict";
import { ROOT } from "../_testing/cli.ts";

export interface Pasted {
  /** 1-based line of the expression in the scanned text. */
  line: number;
  text: string;
}

/** The lines of `run:` values (inline, folded or block scalars) in YAML `text` that hold `${{`. */
export function expressionsInRun(text: string): Pasted[] {
  const lines = text.split("\n");
  const found: Pasted[] = [];
  for (let i = 0; i < lines.length; i++) {
    const key = /^(\s*)(-\s+)?run:(\s|$)(.*)$/.exec(lines[i]!);
    if (!key) continue;
    const indent = key[1]!.length + (key[2]?.length ?? 0);
    const value = [{ line: i + 1, text: key[4]! }];
    // A block scalar (`|`, `>-`) or a plain scalar continued on more-indented lines.
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j]!;
      if (next.trim() !== "" && next.length - next.trimStart().length <= indent) break;
      value.push({ line: j + 1, text: next });
      i = j;
    }
    found.push(...value.filter((part) => part.text.includes("${{")));
  }
  return found;
}

/** The YAML code fences of a Markdown text, each with the line it starts at (its first line is 1 + that). */
export function yamlFences(markdown: string): { start: number; text: string }[] {
  const fences: { start: number; text: string }[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(ya?ml)\b/.exec(lines[i]!);
    if (!open) continue;
    const close = new RegExp(`^\\s*${open[2]![0]}{${open[2]!.length},}\\s*$`);
    const end = lines.findIndex((line, j) => j > i && close.test(line));
    const body = lines.slice(i + 1, end === -1 ? lines.length : end);
    fences.push({
      start: i + 1,
      text: body.map((l) => l.slice(Math.min(open[1]!.length, l.length - l.trimStart().length))).join("\n"),
    });
    i = end === -1 ? lines.length : end;
  }
  return fences;
}

async function* files(dir: string, match: RegExp): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* files(path, match);
    else if (match.test(entry.name)) yield path;
  }
}

Deno.test("workflow expressions: the scanner finds ${{ }} in run: values, not in env:, with: or if:", () => {
  const yaml = [
    "steps:",
    "  - id: hermes",
    "    uses: hermes/hermes@v1",
    "    with:",
    "      prompt: ${{ github.event.issue.title }}",
    "  - if: steps.hermes.outputs.status == 'success'",
    "    env:",
    "      FINAL: ${{ steps.hermes.outputs.final }}",
    '    run: printf "%s" "$FINAL"',
    '  - run: echo "${{ steps.hermes.outputs.final }}"',
    "  - name: block",
    "    run: |",
    "      set -e",
    "",
    '      gh pr comment --body "${{ steps.hermes.outputs.final }}"',
    "    env:",
    "      X: ${{ github.token }}",
    "  - run: >-",
    "      echo ${{ inputs.x }}",
    "  - run: echo plain",
    "      ${{ inputs.continued }}",
  ].join("\n");
  assert.deepEqual(expressionsInRun(yaml).map((p) => p.line), [10, 15, 19, 21]);
  const markdown =
    "Text `run: ${{ x }}`.\n\n```yaml\n- run: echo ${{ y }}\n```\n\n```sh\nrun: ${{ z }}\n```\n";
  const [fence] = yamlFences(markdown);
  assert.deepEqual(expressionsInRun(fence!.text).map((p) => fence!.start + p.line), [4]);
  assert.equal(yamlFences(markdown).length, 1, "only YAML fences");
});

Deno.test("workflow expressions: no run: step of action.yml, examples/, README.md or docs/ pastes ${{ }} into a shell", async () => {
  const problems: string[] = [];
  const report = (file: string, offset: number, pasted: Pasted[]) => {
    for (const p of pasted) {
      problems.push(`${file.slice(ROOT.length + 1)}:${offset + p.line}: ${p.text.trim()}`);
    }
  };
  report(`${ROOT}/action.yml`, 0, expressionsInRun(await Deno.readTextFile(`${ROOT}/action.yml`)));
  let scanned = 0;
  for await (const file of files(`${ROOT}/examples`, /\.ya?ml$/)) {
    report(file, 0, expressionsInRun(await Deno.readTextFile(file)));
    scanned++;
  }
  const markdown = [`${ROOT}/README.md`];
  for await (const file of files(`${ROOT}/docs`, /\.md$/)) markdown.push(file);
  for (const file of markdown) {
    for (const fence of yamlFences(await Deno.readTextFile(file))) {
      report(file, fence.start, expressionsInRun(fence.text));
      scanned++;
    }
  }
  assert.ok(scanned > 5, "the examples and the docs' YAML were found");
  assert.deepEqual(problems, [], 'pass the value through env: and read it as "$NAME"');
});
