/**
 * The compaction floor through the real CLI: `deno run main.ts run` subprocesses play the corpus
 * (tests/corpus/) against the corpus server, which enforces the window and records every request. At every
 * window, for the tool-heavy session and the single-prompt task, and with a summary model that fails, hangs,
 * answers garbage or answers longer than its input: the run exits 0, no request is over its window, every
 * request is valid for strict chat templates (no tool call split from its results, no two messages of one
 * role in a row), and every user turn is in the request verbatim or named by the summary or marker. The
 * tool-heavy sessions are shorter than the bench's (bench/ plays the full 300 turns) but long enough to climb
 * every rung; the single-prompt task is played whole (300 tool calls).
 */
import assert from "node:assert/strict";
import { orphanProblems, roleProblems } from "../../runtime/compaction/_testing.ts";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import {
  type Corpus,
  type CorpusServerOptions,
  singlePromptCorpus,
  startCorpusServer,
  type SummaryBehaviour,
  toolHeavyCorpus,
} from "../corpus/mod.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  problems: string[];
  stats: ReturnType<Awaited<ReturnType<typeof startCorpusServer>>["stats"]>;
  events: Record<string, unknown>[];
}

async function play(
  corpus: Corpus,
  window: number,
  options: Partial<CorpusServerOptions> & { compaction?: string } = {},
): Promise<Run> {
  const problems: string[] = [];
  const prefixes = new Set<string>();
  await using server = await startCorpusServer({
    corpus,
    window,
    ...options,
    inspect: (body, record) => {
      if (record.kind !== "agent") return;
      // The cache-stable prefix: system prompt, tool list and first prompt, byte for byte.
      prefixes.add(JSON.stringify([body.tools, body.messages?.slice(0, 2)]));
      const messages = (body.messages ?? []).map((m) => ({ ...m, role: m.role }));
      for (const p of [...roleProblems(messages), ...orphanProblems(messages as never)]) {
        problems.push(`request ${record.index}: ${p}`);
      }
    },
  });
  const dir = await tempDir("hermes-ladder-");
  try {
    await corpus.writeTo(dir, {
      base_url: server.url,
      window,
      ...(options.compaction ? { compaction: options.compaction } : {}),
    });
    const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "stream-json"], {
      cwd: dir,
      home: dir,
      env: { CORPUS_KEY: "k" },
    });
    const events = stdout.trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    if (prefixes.size !== 1) {
      problems.push(`${prefixes.size} different prefixes (system, tools, first prompt)`);
    }
    return { code, stdout, stderr, problems, stats: server.stats(), events };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function assertFloor(run: Run, what: string, corpus: Corpus) {
  const result = run.events.at(-1)!;
  assert.equal(run.code, 0, `${what}: exit ${run.code}: ${result?.error}\n${run.stderr.slice(-1500)}`);
  assert.equal(result.terminal_reason, "completed", what);
  assert.match(String(result.final), new RegExp(`^Turn ${corpus.prompts.length}: `), what);
  assert.equal(run.stats.over_window, 0, `${what}: no request over its window`);
  assert.equal(run.stats.requests_missing_turns, 0, `${what}: every user turn verbatim or summarised`);
  assert.deepEqual(run.problems, [], `${what}: strict chat templates accept every request`);
  assert.equal(run.stats.agent_requests, corpus.toolCalls + corpus.prompts.length, `${what}: no retries`);
}

const compactions = (run: Run) => run.events.filter((e) => e.type === "compaction");
const fallbacks = (run: Run) =>
  run.events.filter((e) => e.type === "compaction.blocked" && e.fallback === true);

for (const window of [4_000, 8_000, 16_000, 32_000, 128_000]) {
  Deno.test(`ladder CLI: the tool-heavy session at ${window / 1000}k completes within its window`, async () => {
    const corpus = toolHeavyCorpus({ turns: 100 });
    const run = await play(corpus, window);
    assertFloor(run, `${window / 1000}k`, corpus);
    assert.ok(compactions(run).length >= 1, `${window / 1000}k: compaction ran`);
  });
}

for (const window of [32_000, 128_000]) {
  Deno.test(`ladder CLI: one prompt then 300 tool calls at ${window / 1000}k completes within its window`, async () => {
    const corpus = singlePromptCorpus({ toolCalls: 300 });
    const run = await play(corpus, window);
    assertFloor(run, `single prompt ${window / 1000}k`, corpus);
    assert.ok(compactions(run).length >= 1);
  });
}

Deno.test("ladder CLI: a summary model with a small window gets requests that fit it (the middle in chunks)", async () => {
  const corpus = toolHeavyCorpus({ turns: 40 });
  const run = await play(corpus, 32_000, {
    summaryWindow: 6_000,
    compaction: "summary_context_window: 6000",
  });
  assertFloor(run, "small summary window", corpus);
  assert.ok(run.stats.summary_calls >= 2, `${run.stats.summary_calls} summary calls`);
  assert.ok(run.stats.max_summary_request_share <= 1, `${run.stats.max_summary_request_share}`);
});

const FAILING: [SummaryBehaviour, string, string][] = [
  ["http500", "summary_failed", ""],
  ["hang", "summary_failed", "summary_timeout: 2s"],
  ["garbage", "not_a_summary", ""],
  ["longer", "refused_growth", ""],
];
for (const [summary, why, compaction] of FAILING) {
  Deno.test(`ladder CLI: at 16k with a summary model that answers ${summary}, the fallback keeps the run going`, async () => {
    const corpus = toolHeavyCorpus({ turns: 100 });
    const run = await play(corpus, 16_000, { summary, hangMs: 60_000, compaction });
    assertFloor(run, summary, corpus);
    const blocked = fallbacks(run);
    assert.ok(blocked.length >= 1, `${summary}: the fallback ran`);
    assert.ok(blocked.some((e) => e.reason === why), `${summary}: the fallback ran because of ${why}`);
    assert.match(run.stderr, /the fallback dropped \d+ earlier messages behind one marker/);
    // A "longer" answer can still be smaller than the whole rows it replaces (the request clips them), and a
    // summary that works clears the strikes: only the others pause summary calls for good.
    if (summary !== "longer") {
      assert.ok(
        blocked.some((e) => e.reason === "breaker" || e.reason === "cooldown"),
        `${summary}: later passes skip the summary call and fall back at once`,
      );
    }
  });
}

Deno.test("ladder CLI: only an irreducible part over the window fails — exit 1, context_too_large, sizes named, nothing sent", async () => {
  const server = await startOpenAIServer([{ content: "never sent" }]);
  const dir = await writeFiles(await tempDir("hermes-ladder-"), {
    "job.yaml": `name: too-big
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: 4000 }
system: ${JSON.stringify("Follow every rule. ".repeat(1000))}
prompt: hello
tools:
  read_file: { paths: ["."] }
`,
  });
  try {
    const { code, stdout } = await hermes(["run", "job.yaml", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { TEST_KEY: "k" },
    });
    assert.equal(code, 1);
    const result = JSON.parse(stdout);
    assert.deepEqual([result.status, result.terminal_reason], ["failed", "context_too_large"]);
    assert.match(
      result.error,
      /^Cannot fit the next request into the model's 4000-token context window: its irreducible part alone is about \d+ tokens \(system prompt \d{4}, tool definitions \d+, latest user message \d+, current tool round 0\)/,
    );
    assert.equal(server.requests.length, 0, "no request over the window went out");
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
