import assert from "node:assert/strict";
import { hermes, tempDir } from "../_testing/cli.ts";
import { toolHeavyCorpus } from "./corpus.ts";
import { startAnthropicCorpusServer } from "./anthropic_server.ts";

Deno.test("corpus on provider anthropic: every turn played, at most four breakpoints, reads as reported", async () => {
  const corpus = toolHeavyCorpus({ turns: 8 });
  await using server = await startAnthropicCorpusServer({ corpus, window: 200_000 });
  const dir = await tempDir();
  try {
    await corpus.writeTo(dir, { base_url: server.url, window: 200_000, provider: "anthropic" });
    const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { CORPUS_KEY: "k" },
    });
    assert.equal(code, 0, stderr);
    const result = JSON.parse(stdout);
    assert.match(result.final, /^Turn 8: /);
    const stats = server.stats();
    assert.equal(stats.agent_requests, corpus.toolCalls + corpus.prompts.length);
    assert.equal(stats.failed, 0);
    assert.equal(stats.over_breakpoints, 0);
    assert.equal(result.usage.prompt_tokens, stats.prompt_tokens);
    assert.equal(result.usage.cached_tokens, stats.cache_read_tokens);
    assert.equal(result.usage.cache_write_tokens, stats.cache_write_tokens);
    assert.ok(
      stats.cached_share > 0.8,
      `an uncompacted session reads most of its input: ${stats.cached_share}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
