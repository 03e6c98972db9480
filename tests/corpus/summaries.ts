/**
 * The corpus's summary model: what it answers to a compaction summary request. `ok` writes a ~300-token
 * summary with the six sections Hermes asks for, naming the user turns it covers (`User turns covered: 1–17`,
 * from the `[turn N]` markers in the messages and the previous summary) so a test can tell which user
 * messages a summary stands for. The other behaviours are the failures a compaction ladder must survive.
 */
import { turnsMentioned } from "./corpus.ts";

/**
 * - `ok`: the six-section summary (~300 tokens);
 * - `http500`: HTTP 500 on every summary call;
 * - `hang`: sends nothing until `hangMs` passes (default: until the server closes), past any timeout;
 * - `garbage`: HTTP 200 with text that is no summary (no sections, noise);
 * - `empty`: HTTP 200 with an empty answer;
 * - `longer`: a six-section summary longer than the request it answers.
 */
export type SummaryBehaviour = "ok" | "http500" | "hang" | "garbage" | "empty" | "longer";

export const SUMMARY_BEHAVIOURS: readonly SummaryBehaviour[] = [
  "ok",
  "http500",
  "hang",
  "garbage",
  "empty",
  "longer",
];

const COVERED = /User turns covered: ([0-9–, ]+)/g;

/** The user turns a text names: `[turn N]` markers and `User turns covered: a–b, c` lines of summaries. */
export function turnsCovered(text: string): Set<number> {
  const turns = new Set(turnsMentioned(text));
  for (const m of text.matchAll(COVERED)) {
    for (const part of m[1]!.split(",")) {
      const [from, to] = part.trim().split("–").map(Number);
      if (from === undefined || !Number.isInteger(from)) continue;
      for (let t = from; t <= (Number.isInteger(to) ? to! : from); t++) turns.add(t);
    }
  }
  return turns;
}

/** `1–4, 7, 9–10`. */
export function formatRanges(turns: Iterable<number>): string {
  const sorted = [...new Set(turns)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}

/** The `ok` summary of a request whose messages are `requestText`: about 300 tokens. */
export function okSummary(requestText: string): string {
  const turns = turnsCovered(requestText);
  const files = [...new Set(requestText.match(/src\/module_\d+\.ts|build\.log/g) ?? [])].slice(0, 12);
  return [
    "## Goal",
    "Keep the TypeScript service healthy: answer each user turn after reading the files it names.",
    "## Constraints",
    "Read files only with read_file; answer in one line per turn; change nothing without being asked.",
    "## Progress",
    `User turns covered: ${turns.size ? formatRanges(turns) : "none"}.`,
    "Each turn read the files it named; the build log showed only passing tests; no module needed a change.",
    "The answers were one line each and named the files read; no tool call failed and nothing was written.",
    "Modules reviewed so far export small arithmetic step functions; none of them handles retries or I/O.",
    "## Decisions",
    "Treat the build as green while build.log reports only passing tests. Leave generated modules untouched.",
    "Do not re-read a file that has not changed unless the user asks; prefer the latest build.log reading.",
    "## Files and identifiers",
    files.length ? files.join(", ") : "none",
    "## Next steps",
    "Continue with the next user turn: read what it names, check build.log when asked, answer in one line.",
    "Report any failing test in build.log at once, with its number and duration, and the module it touches.",
  ].join("\n");
}

/** A six-section summary longer than the `inputChars` of the request it answers. */
export function longerSummary(requestText: string): string {
  const base = okSummary(requestText);
  const filler = "The agent re-read the same files and found the same passing tests again. ";
  return `${base}\n${filler.repeat(Math.ceil((requestText.length * 1.25) / filler.length))}`;
}

export function garbageSummary(): string {
  return "ok ok ok %%% <|im_end|> lorem ipsum 0x7f3a ??? \u0000 the the the".repeat(3);
}
