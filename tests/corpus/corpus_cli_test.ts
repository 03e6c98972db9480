import assert from "node:assert/strict";
import { hermes, tempDir } from "../_testing/cli.ts";
import { singlePromptCorpus, toolHeavyCorpus } from "./corpus.ts";
import { startCorpusServer } from "./server.ts";

Deno.test("corpus through the CLI: a large window plays every turn, nothing over it, nothing missing", async () => {
  const corpus = toolHeavyCorpus({ turns: 6 });
  await using server = await startCorpusServer({ corpus, window: 200_000 });
  const dir = await tempDir();
  try {
    await corpus.writeTo(dir, { base_url: server.url, window: 200_000 });
    const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { CORPUS_KEY: "k" },
    });
    assert.equal(code, 0, stderr);
    const result = JSON.parse(stdout);
    assert.match(result.final, /^Turn 6: /);
    const stats = server.stats();
    assert.equal(stats.agent_requests, corpus.toolCalls + corpus.prompts.length);
    assert.equal(stats.over_window, 0);
    assert.equal(stats.requests_missing_turns, 0);
    assert.equal(result.usage.prompt_tokens, stats.prompt_tokens);
    assert.ok(stats.cached_share > 0.5, `an append-only run is mostly cached: ${stats.cached_share}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("corpus through the CLI: the single-prompt task replays its tool calls in order", async () => {
  const corpus = singlePromptCorpus({ toolCalls: 8, maxBytes: 4096 });
  await using server = await startCorpusServer({ corpus, window: 200_000 });
  const dir = await tempDir();
  try {
    await corpus.writeTo(dir, { base_url: server.url, window: 200_000 });
    const { code, stderr } = await hermes(["run", "job.yaml"], {
      cwd: dir,
      home: dir,
      env: { CORPUS_KEY: "k" },
    });
    assert.equal(code, 0, stderr);
    assert.deepEqual(server.records.map((r) => r.step), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
