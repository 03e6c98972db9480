/**
 * The tool-heavy compaction corpus, generated from a seed so every run of a test or bench sees
 * the same session:
 *
 * - {@linkcode toolHeavyCorpus}: `turns` user turns (default 300). Every turn asks the model to read files:
 *   even turns re-read `build.log` (24 KB, unchanged), odd turns read one of `files` source files of
 *   2–60 KB; some turns (`extraReadChance`) read a second source file. Then the model answers in a line.
 * - {@linkcode singlePromptCorpus}: one prompt, then `toolCalls` tool calls in a row (default 300), the log
 *   every other call, then one answer.
 *
 * A corpus is data: the files to put in the job directory, the user turns, and for each turn the tool calls
 * the scripted model makes. {@linkcode Corpus.reply} says what the model answers to a request; the corpus
 * server (tests/corpus/server.ts) calls it. Each user turn starts with a `[turn N]` marker and each tool call
 * id is `call_tN_sS`, so the server finds its place from the request alone (after a retry, an overflow
 * recovery or any compaction) rather than from a counter. {@linkcode Corpus.jobYaml} writes a job running
 * the corpus against a server; {@linkcode Corpus.writeTo} puts files and job in a directory.
 */

/** What the scripted model answers: one tool call, or the turn's final text. */
export type CorpusReply =
  | { kind: "tool"; turn: number; step: number; id: string; name: "read_file"; arguments: string }
  | { kind: "answer"; turn: number; content: string };

export interface Corpus {
  readonly kind: "turns" | "single_prompt";
  readonly seed: number;
  /** Path (relative to the job directory) → content. */
  readonly files: Readonly<Record<string, string>>;
  /** The user turns, in order (turn N is `prompts[N - 1]`); each starts with `[turn N]`. */
  readonly prompts: readonly string[];
  /** For each turn, the paths the model reads, in order, before it answers. */
  readonly reads: readonly (readonly string[])[];
  /** Tool calls over all turns. */
  readonly toolCalls: number;
  /** The model's answer to turn `turn` after `step` tool calls (step 0: right after the user message). */
  reply(turn: number, step: number): CorpusReply;
  /** A job file running the corpus against `base_url` (the server's /v1 URL). */
  jobYaml(options: JobOptions): string;
  /** Writes the files and `job.yaml` (from `options`) into `dir`. */
  writeTo(dir: string, options: JobOptions): Promise<void>;
}

export interface JobOptions {
  base_url: string;
  /** `model.context_window` of the job. */
  window: number;
  /** Default `agent-model`. */
  model?: string;
  /** `compaction.summary_model`; default `summary-model` (so the server tells summary calls apart by name too). */
  summary_model?: string;
  /** Extra `compaction:` keys as YAML flow entries, e.g. `"micro: { enabled: true }, summary_timeout: 5s"`. */
  compaction?: string;
  /** Extra top-level YAML appended to the job (e.g. `"output: { format: json }"`). */
  extra?: string;
  /** Name of the env var holding the API key (default CORPUS_KEY; the server accepts any key). */
  api_key_env?: string;
  /** `model.provider` (default openai; `anthropic` against tests/corpus/anthropic_server.ts). */
  provider?: string;
}

export interface ToolHeavyOptions {
  /** User turns (default 300). */
  turns?: number;
  /** Default 19. */
  seed?: number;
  /** Source files in the pool the odd turns read from (default 40). */
  files?: number;
  /** Sizes of source files in bytes (default 2 KB–60 KB). */
  minBytes?: number;
  maxBytes?: number;
  /** Size of `build.log` (default 24 KB), re-read unchanged every other turn. */
  logBytes?: number;
  /** Share of turns reading a second source file (default 0.15). */
  extraReadChance?: number;
}

export interface SinglePromptOptions {
  /** Tool calls after the one prompt (default 300). */
  toolCalls?: number;
  seed?: number;
  files?: number;
  minBytes?: number;
  maxBytes?: number;
  logBytes?: number;
}

export const LOG_PATH = "build.log";
export const TURN_MARKER = /\[turn (\d+)\]/g;
const CALL_ID = /^call_t(\d+)_s(\d+)$/;

/** The `[turn N]` of each user turn mentioned in `text`, in order. */
export function turnsMentioned(text: string): number[] {
  return [...text.matchAll(TURN_MARKER)].map((m) => Number(m[1]));
}

/** `call_tN_sS` → {turn: N, step: S}; null for an id the corpus did not make. */
export function parseCallId(id: string): { turn: number; step: number } | null {
  const m = CALL_ID.exec(id);
  return m ? { turn: Number(m[1]), step: Number(m[2]) } : null;
}

export function toolHeavyCorpus(options: ToolHeavyOptions = {}): Corpus {
  const seed = options.seed ?? 19;
  const random = mulberry32(seed);
  const files = sourceFiles(random, options);
  const sources = Object.keys(files);
  files[LOG_PATH] = buildLog(random, options.logBytes ?? 24 * 1024);
  const turns = options.turns ?? 300;
  const extra = options.extraReadChance ?? 0.15;
  const prompts: string[] = [];
  const reads: string[][] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const paths = turn % 2 === 0 ? [LOG_PATH] : [pick(random, sources)];
    if (random() < extra) paths.push(pick(random, sources));
    reads.push(paths);
    prompts.push(userTurn(random, turn, paths));
  }
  return corpus("turns", seed, files, prompts, reads);
}

export function singlePromptCorpus(options: SinglePromptOptions = {}): Corpus {
  const seed = options.seed ?? 19;
  const random = mulberry32(seed);
  const files = sourceFiles(random, options);
  const sources = Object.keys(files);
  files[LOG_PATH] = buildLog(random, options.logBytes ?? 24 * 1024);
  const calls = options.toolCalls ?? 300;
  const paths = Array.from({ length: calls }, (_, i) => (i % 2 === 1 ? LOG_PATH : pick(random, sources)));
  const prompt = `[turn 1] Audit the repository: read the source files under src/ one by one and check ` +
    `${LOG_PATH} between them for new failures. Make ${calls} reads, then report what you found in one line.`;
  return corpus("single_prompt", seed, files, [prompt], [paths]);
}

function corpus(
  kind: Corpus["kind"],
  seed: number,
  files: Record<string, string>,
  prompts: string[],
  reads: string[][],
): Corpus {
  const self: Corpus = {
    kind,
    seed,
    files,
    prompts,
    reads,
    toolCalls: reads.reduce((n, r) => n + r.length, 0),
    reply(turn, step) {
      const paths = reads[turn - 1];
      if (!paths) throw new RangeError(`The corpus has no turn ${turn} (it has ${reads.length})`);
      const path = paths[step];
      if (path !== undefined) {
        return {
          kind: "tool",
          turn,
          step,
          id: `call_t${turn}_s${step}`,
          name: "read_file",
          arguments: JSON.stringify({ path }),
        };
      }
      return { kind: "answer", turn, content: answer(turn, paths) };
    },
    jobYaml(o) {
      const [first, ...rest] = prompts;
      const q = (s: string) => JSON.stringify(s);
      return [
        `name: corpus-${kind.replace("_", "-")}`,
        `model: { provider: ${o.provider ?? "openai"}, name: ${o.model ?? "agent-model"}, base_url: ${
          q(o.base_url)
        }, ` +
        `api_key_env: ${o.api_key_env ?? "CORPUS_KEY"}, context_window: ${o.window} }`,
        `system: ${q(SYSTEM)}`,
        `prompt: ${q(first!)}`,
        ...(rest.length ? ["steps:", ...rest.map((p) => `  - ${q(p)}`)] : []),
        `tools:`,
        `  read_file: { paths: ["."] }`,
        `limits: { max_turns: ${Math.max(50, 2 * self.toolCalls + 10)} }`,
        `compaction: { summary_model: ${o.summary_model ?? "summary-model"}${
          o.compaction ? `, ${o.compaction}` : ""
        } }`,
        ...(o.extra ? [o.extra] : []),
        "",
      ].join("\n");
    },
    async writeTo(dir, o) {
      for (const [path, content] of Object.entries(files)) {
        const full = `${dir}/${path}`;
        await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
        await Deno.writeTextFile(full, content);
      }
      await Deno.writeTextFile(`${dir}/job.yaml`, self.jobYaml(o));
    },
  };
  return self;
}

const SYSTEM =
  "You maintain a TypeScript service. Read files with read_file when asked, then answer briefly.";

const ASKS = [
  "Check whether the build is still green",
  "Look for anything that could break the release",
  "Review the change and say if it is safe",
  "Find the function that handles retries",
  "Tell me whether the tests cover this module",
  "Look for dead code we could delete",
];

function userTurn(random: () => number, turn: number, paths: string[]): string {
  const ask = pick(random, ASKS);
  return `[turn ${turn}] ${ask}: read ${paths.join(" and ")} and answer in one line.`;
}

function answer(turn: number, paths: readonly string[]): string {
  return `Turn ${turn}: read ${
    paths.join(", ")
  }; nothing alarming, the build stays green and no change is needed.`;
}

function sourceFiles(
  random: () => number,
  options: { files?: number; minBytes?: number; maxBytes?: number },
): Record<string, string> {
  const count = options.files ?? 40;
  const min = options.minBytes ?? 2 * 1024;
  const max = options.maxBytes ?? 60 * 1024;
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const size = Math.floor(min + random() * (max - min));
    const lines: string[] = [`// src/module_${i}.ts — generated for the compaction corpus`];
    let n = lines[0]!.length + 1;
    for (let j = 0; n < size; j++) {
      const a = Math.floor(random() * 1000);
      const line = `export function step${i}_${j}(value: number): number { return value * ${a} + ${j}; }`;
      lines.push(line);
      n += line.length + 1;
    }
    files[`src/module_${i}.ts`] = lines.join("\n").slice(0, size);
  }
  return files;
}

function buildLog(random: () => number, size: number): string {
  const lines: string[] = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const ms = Math.floor(random() * 9000) + 100;
    const line = `2026-12-01T09:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${
      String(i % 60).padStart(2, "0")
    }Z INFO test ${i} passed in ${ms}ms`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join("\n").slice(0, size);
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same corpus on every machine. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
