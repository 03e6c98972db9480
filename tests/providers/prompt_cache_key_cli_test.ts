/**
 * A recurring job's requests share one `prompt_cache_key` (OpenAI's field), so its runs land on the same
 * prompt cache; a job without a schedule sends none.
 */
import assert from "node:assert/strict";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

Deno.test("prompt_cache_key: every request of every run of a scheduled job carries the same key", async () => {
  await using server = await startOpenAIServer([
    { content: "one" },
    { content: "two" },
    { content: "three" },
  ]).then((s) => Object.assign(s, { [Symbol.asyncDispose]: () => s.close() }));
  const model = `model: { name: gpt-4.1-mini, base_url: "${server.url}", api_key_env: none }\n`;
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: nightly\n${model}prompt: report\nschedule: { cron: "0 9 * * *" }\n`,
    "plain/job.yaml": `name: once\n${model}prompt: report\n`,
  });
  for (const _ of [1, 2]) {
    const { code, stderr } = await runEvents(dir);
    assert.equal(code, 0, stderr);
  }
  const plain = await runEvents(`${dir}/plain`);
  assert.equal(plain.code, 0, plain.stderr);
  assert.deepEqual(server.requests.map((r) => r.prompt_cache_key), [
    "hermes-job-nightly",
    "hermes-job-nightly",
    undefined,
  ]);
  await Deno.remove(dir, { recursive: true });
});
