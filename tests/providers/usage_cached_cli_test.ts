/**
 * `usage.cached_tokens` through the real CLI: the provider's cached prompt tokens (Chat Completions
 * `prompt_tokens_details.cached_tokens`, from the corpus server's simulated prefix cache) summed on every
 * `turn.end` and in the result, 0 when the server reports none; `sessions compactions` shows the share.
 */
import assert from "node:assert/strict";
import { hermes, tempDir } from "../_testing/cli.ts";
import { startCorpusServer, toolHeavyCorpus } from "../corpus/mod.ts";

async function run(reportCached: boolean) {
  const corpus = toolHeavyCorpus({ turns: 5, maxBytes: 8192 });
  const server = await startCorpusServer({ corpus, window: 200_000, reportCached });
  const dir = await tempDir();
  try {
    await corpus.writeTo(dir, { base_url: server.url, window: 200_000 });
    const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "stream-json"], {
      cwd: dir,
      home: dir,
      env: { CORPUS_KEY: "k" },
    });
    assert.equal(code, 0, stderr);
    const events = stdout.trim().split("\n").map((line) => JSON.parse(line));
    const result = events.at(-1);
    assert.equal(result.type, "result");
    const ends = events.filter((e) => e.type === "turn.end");
    const report = await hermes(["sessions", "compactions", result.session_id], { home: dir });
    const json = await hermes(["sessions", "compactions", result.session_id, "--json"], { home: dir });
    assert.equal(report.code, 0, report.stderr);
    return { result, ends, server, report: report.stdout, json: JSON.parse(json.stdout), dir };
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("usage.cached_tokens: the result and every turn.end carry what the server reported", async () => {
  const { result, ends, server, report, json } = await run(true);
  const answered = server.records.filter((r) => r.kind === "agent" && r.status === 200);
  const reported = answered.reduce((n, r) => n + r.cached_tokens, 0);
  assert.ok(reported > 0, "the simulated cache served part of the prompts");
  assert.equal(result.usage.cached_tokens, reported);
  assert.equal(result.usage.prompt_tokens, answered.reduce((n, r) => n + r.reported_prompt_tokens, 0));
  assert.deepEqual(ends.map((e) => e.usage.cached_tokens), answered.map((r) => r.cached_tokens));
  assert.deepEqual(json.prompt_cache, {
    prompt_tokens: result.usage.prompt_tokens,
    cached_tokens: reported,
    cached_share: reported / result.usage.prompt_tokens,
  });
  const share = Math.round((100 * reported) / result.usage.prompt_tokens);
  assert.match(
    report,
    new RegExp(`prompt cache: ${share}% of ${result.usage.prompt_tokens} prompt tokens cached`),
  );
});

Deno.test("usage.cached_tokens: 0 on turn.end and in the result when the server reports no cache", async () => {
  const { result, ends, report } = await run(false);
  assert.equal(result.usage.cached_tokens, 0);
  assert.ok(result.usage.prompt_tokens > 0);
  assert.ok(ends.length > 0 && ends.every((e) => e.usage.cached_tokens === 0));
  assert.match(report, /prompt cache: 0% of \d+ prompt tokens cached/);
});
