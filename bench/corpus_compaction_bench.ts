/**
 * What compaction costs on the issue-19 corpus (tests/corpus/): the 300-turn tool-heavy session at 4k, 8k,
 * 16k, 32k and 128k windows and the single-prompt 300-tool-call task at 32k and 128k, each through the real
 * CLI (`hermes run`, its compactor, the OpenAI client over HTTP) against the corpus server and its simulated
 * prefix cache (a request's cached tokens: the longest prefix shared with one of the previous 8 requests).
 *
 * Per config: model requests and summary calls, prompt and cached tokens, the cached share against the
 * append-only baseline (an agent that never rewrites its transcript, on the same cache), the cost-weighted
 * input (uncached + 0.1 × cached + summary prompt and completion tokens), the largest request against the
 * window, the exit status, and the wall time. The token figures are deterministic (seeded corpus, scripted
 * model); the wall time is the median (min–max) over `--rounds`, the configs interleaved round by round.
 *
 * The `anthropic-*` configs run the same session with `provider: anthropic` against the scripted Anthropic
 * server (tests/corpus/anthropic_server.ts), whose cache is the API's: only prefixes ending at a
 * `cache_control` breakpoint are written, a breakpoint reads back at most 20 blocks, and prefixes under 1024
 * tokens are not cached. There the cached share is cache reads ÷ all input tokens, and the cost-weighted
 * input bills reads at 0.1 and writes at 1.25.
 *
 * Usage: deno run -A bench/corpus_compaction_bench.ts [--rounds N] [--only 8k,single-128k,anthropic]
 *        [--turns N] [--json FILE]
 */
import { parseArgs } from "node:util";
import { hermes } from "../tests/_testing/cli.ts";
import type { ChatRequestBody } from "../tests/_testing/openai_server.ts";
import {
  appendOnlyBaseline,
  type Corpus,
  type CorpusStats,
  singlePromptCorpus,
  startCorpusServer,
  toolHeavyCorpus,
} from "../tests/corpus/mod.ts";
import { type AnthropicCorpusStats, startAnthropicCorpusServer } from "../tests/corpus/anthropic_server.ts";
import { report, spread } from "./_stats.ts";

interface Config {
  name: string;
  kind: "turns" | "single";
  window: number;
  provider?: "anthropic";
}

const CONFIGS: Config[] = [
  { name: "turns-4k", kind: "turns", window: 4_000 },
  { name: "turns-8k", kind: "turns", window: 8_000 },
  { name: "turns-16k", kind: "turns", window: 16_000 },
  { name: "turns-32k", kind: "turns", window: 32_000 },
  { name: "turns-128k", kind: "turns", window: 128_000 },
  { name: "single-32k", kind: "single", window: 32_000 },
  { name: "single-128k", kind: "single", window: 128_000 },
  { name: "anthropic-turns-32k", kind: "turns", window: 32_000, provider: "anthropic" },
  { name: "anthropic-turns-128k", kind: "turns", window: 128_000, provider: "anthropic" },
];

interface Run {
  code: number;
  terminal_reason: string;
  stats: CorpusStats;
  baselineShare: number;
  /** `usage.cached_tokens` of the result (null when the result has none). */
  resultCached: number | null;
  compactions: Record<string, number>;
  ms: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      rounds: { type: "string", default: "1" },
      only: { type: "string" },
      turns: { type: "string", default: "300" },
      json: { type: "string" },
    },
  });
  const only = values.only?.split(",").map((s) => s.trim());
  // `--only 8k` picks every config at that window, `--only single` every single-prompt one, or a full name.
  const configs = CONFIGS.filter((c) =>
    !only || only.some((o) => [c.name, c.kind, c.provider, c.name.split("-").at(-1)].includes(o))
  );
  const size = Number(values.turns);
  const corpora = {
    turns: toolHeavyCorpus({ turns: size }),
    single: singlePromptCorpus({ toolCalls: size }),
  };
  const runs = new Map<string, Run[]>(configs.filter((c) => !c.provider).map((c) => [c.name, []]));
  const anthropicRuns = new Map<string, AnthropicRun[]>(
    configs.filter((c) => c.provider).map((c) => [c.name, []]),
  );
  const root = await Deno.makeTempDir({ prefix: "hermes-corpus-bench-" });
  try {
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const config of configs) {
        if (config.provider) {
          anthropicRuns.get(config.name)!.push(await runAnthropic(root, corpora[config.kind], config));
        } else runs.get(config.name)!.push(await runOnce(root, corpora[config.kind], config));
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
  console.log(
    `the issue-19 corpus (${size} turns / tool calls) through the CLI, simulated 8-request prefix cache`,
  );
  const out: Record<string, unknown> = {};
  for (const config of configs.filter((c) => c.provider)) {
    const samples = anthropicRuns.get(config.name)!;
    const run = samples[0]!;
    const s = run.stats;
    const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
    console.log(`${config.name} (window ${config.window}, provider anthropic, breakpoint cache)`);
    report("  exit status (terminal_reason)", `${run.code} (${run.terminal_reason})`, "0");
    report("  model requests / summary calls", `${s.agent_requests} / ${s.summary_calls}`);
    report("  compaction passes by kind", formatKinds(run.compactions));
    report(
      "  input tokens / cache reads / cache writes",
      `${k(s.prompt_tokens)} / ${k(s.cache_read_tokens)} / ${k(s.cache_write_tokens)}`,
    );
    report("  cached share (cache reads ÷ input tokens)", pct(s.cached_share), "≥ 90 %");
    report(
      "  cost-weighted input (uncached + 0.1 × read + 1.25 × write + summary)",
      `${(s.cost_weighted_input / 1e6).toFixed(3)} M`,
    );
    report("  max request ÷ window / failed requests", `${s.max_request_share.toFixed(3)} / ${s.failed}`);
    report("  requests over 4 breakpoints", String(s.over_breakpoints), "0");
    report("  result usage.cached_tokens / cache_write_tokens", `${run.resultCached} / ${run.resultWrites}`);
    report("  wall time", spread(samples.map((r) => r.ms), (ms) => `${(ms / 1000).toFixed(1)} s`));
    out[config.name] = { window: config.window, ...run, ms: samples.map((r) => r.ms) };
  }
  for (const config of configs.filter((c) => !c.provider)) {
    const samples = runs.get(config.name)!;
    const run = samples[0]!;
    const s = run.stats;
    const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
    console.log(`${config.name} (window ${config.window})`);
    report("  exit status (terminal_reason)", `${run.code} (${run.terminal_reason})`, "0");
    report("  model requests / summary calls", `${s.agent_requests} / ${s.summary_calls}`);
    report("  compaction passes by kind", formatKinds(run.compactions));
    report("  prompt tokens / cached tokens", `${k(s.prompt_tokens)} / ${k(s.cached_tokens)}`);
    report(
      "  cached share (append-only baseline, ratio)",
      `${pct(s.cached_share)} (${pct(run.baselineShare)}, ${pct(s.cached_share / run.baselineShare)})`,
    );
    report(
      "  cost-weighted input (uncached + 0.1 × cached + summary)",
      `${(s.cost_weighted_input / 1e6).toFixed(3)} M`,
    );
    report(
      "  max request ÷ window / requests over it",
      `${s.max_request_share.toFixed(3)} / ${s.over_window}`,
      "< 1 / 0",
    );
    report("  requests missing a user turn", String(s.requests_missing_turns), "0");
    if (run.resultCached !== null) {
      report("  result usage.cached_tokens (server-reported answered)", String(run.resultCached));
    }
    report("  wall time", spread(samples.map((r) => r.ms), (ms) => `${(ms / 1000).toFixed(1)} s`));
    const deterministic = samples.every((r) => JSON.stringify(r.stats) === JSON.stringify(s));
    if (!deterministic) report("  (token figures differed between rounds)", "!");
    out[config.name] = { window: config.window, ...run, ms: samples.map((r) => r.ms) };
  }
  if (values.json) await Deno.writeTextFile(values.json, JSON.stringify(out, null, 2) + "\n");
}

async function runOnce(root: string, corpus: Corpus, config: Config): Promise<Run> {
  let first: ChatRequestBody | undefined;
  await using server = await startCorpusServer({
    corpus,
    window: config.window,
    inspect: (body, record) => {
      if (record.kind === "agent") {
        first ??= structuredClone({ tools: body.tools ?? [], messages: body.messages?.slice(0, 1) ?? [] });
      }
    },
  });
  const dir = await Deno.makeTempDir({ dir: root, prefix: `${config.name}-` });
  await corpus.writeTo(dir, { base_url: server.url, window: config.window });
  const started = performance.now();
  const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "stream-json"], {
    cwd: dir,
    home: dir,
    env: { CORPUS_KEY: "bench" },
  });
  const ms = performance.now() - started;
  const events = stdout.trim().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const result = events.at(-1);
  if (result?.type !== "result") {
    throw new Error(`${config.name}: no result (exit ${code}): ${stderr.slice(-400)}`);
  }
  const compactions: Record<string, number> = {};
  for (const e of events) if (e.type === "compaction") compactions[e.kind] = (compactions[e.kind] ?? 0) + 1;
  const system = String(first?.messages?.[0]?.content ?? "");
  const baseline = appendOnlyBaseline(corpus, { system, tools: first?.tools ?? [] });
  await Deno.remove(dir, { recursive: true });
  return {
    code,
    terminal_reason: result.terminal_reason,
    stats: server.stats(),
    baselineShare: baseline.cached_share,
    resultCached: typeof result.usage?.cached_tokens === "number" ? result.usage.cached_tokens : null,
    compactions,
    ms,
  };
}

interface AnthropicRun {
  code: number;
  terminal_reason: string;
  stats: AnthropicCorpusStats;
  resultCached: number | null;
  resultWrites: number | null;
  compactions: Record<string, number>;
  ms: number;
}

async function runAnthropic(root: string, corpus: Corpus, config: Config): Promise<AnthropicRun> {
  await using server = await startAnthropicCorpusServer({ corpus, window: config.window });
  const dir = await Deno.makeTempDir({ dir: root, prefix: `${config.name}-` });
  await corpus.writeTo(dir, { base_url: server.url, window: config.window, provider: "anthropic" });
  const started = performance.now();
  const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "stream-json"], {
    cwd: dir,
    home: dir,
    env: { CORPUS_KEY: "bench" },
  });
  const ms = performance.now() - started;
  const events = stdout.trim().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const result = events.at(-1);
  if (result?.type !== "result") {
    throw new Error(`${config.name}: no result (exit ${code}): ${stderr.slice(-400)}`);
  }
  const compactions: Record<string, number> = {};
  for (const e of events) if (e.type === "compaction") compactions[e.kind] = (compactions[e.kind] ?? 0) + 1;
  await Deno.remove(dir, { recursive: true });
  const count = (n: unknown) => typeof n === "number" ? n : null;
  return {
    code,
    terminal_reason: result.terminal_reason,
    stats: server.stats(),
    resultCached: count(result.usage?.cached_tokens),
    resultWrites: count(result.usage?.cache_write_tokens),
    compactions,
    ms,
  };
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

function formatKinds(kinds: Record<string, number>): string {
  const entries = Object.entries(kinds);
  return entries.length ? entries.map(([kind, n]) => `${kind} ${n}`).join(", ") : "none";
}

if (import.meta.main) await main();
