/**
 * Every usage count through the real CLI: prompt, completion, cached (read), cache write and reasoning tokens
 * as the server reported them, per model call on `turn.end` and summed in the result.
 */
import assert from "node:assert/strict";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

for (const stream of [false, true]) {
  Deno.test(`usage (openai, stream: ${stream}): reasoning and cached tokens on turn.end and in the result`, async () => {
    await using server = await startOpenAIServer([
      {
        tool_calls: [{ name: "list_dir", arguments: { path: "." } }],
        usage: { prompt_tokens: 400, completion_tokens: 120, cached_tokens: 0, reasoning_tokens: 100 },
      },
      {
        content: "done",
        usage: { prompt_tokens: 450, completion_tokens: 30, cached_tokens: 384, reasoning_tokens: 20 },
      },
    ]).then((s) => Object.assign(s, { [Symbol.asyncDispose]: () => s.close() }));
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: usage\nmodel: { name: test-model, base_url: "${server.url}", api_key_env: none, ` +
        `stream: ${stream} }\nprompt: look\ntools:\n  list_dir: { paths: ["."] }\n`,
    });
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const ends = events.filter((e) => e.type === "turn.end");
    assert.deepEqual(ends.map((e) => e.usage), [
      {
        prompt_tokens: 400,
        completion_tokens: 120,
        cached_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 100,
      },
      {
        prompt_tokens: 450,
        completion_tokens: 30,
        cached_tokens: 384,
        cache_write_tokens: 0,
        reasoning_tokens: 20,
      },
    ]);
    const result = events.at(-1)!;
    assert.deepEqual(result.usage, {
      prompt_tokens: 850,
      completion_tokens: 150,
      cached_tokens: 384,
      cache_write_tokens: 0,
      reasoning_tokens: 120,
    });
    await Deno.remove(dir, { recursive: true });
  });
}

Deno.test("usage (scripted): cache writes reported by the provider are summed like the other counts", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      "name: usage\nmodel: { provider: scripted, script: replies.yaml }\nprompt: hi\nsteps: [again]\n",
    "replies.yaml": [
      "- content: one",
      "  usage: { prompt_tokens: 1000, completion_tokens: 5, cache_write_tokens: 900 }",
      "- content: two",
      "  usage: { prompt_tokens: 1010, completion_tokens: 5, cached_tokens: 900, cache_write_tokens: 10 }",
      "",
    ].join("\n"),
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.deepEqual(
    events.filter((e) => e.type === "turn.end").map((e) =>
      (e.usage as Record<string, number>).cache_write_tokens
    ),
    [900, 10],
  );
  const result = events.at(-1)!;
  assert.deepEqual(result.usage, {
    prompt_tokens: 2010,
    completion_tokens: 10,
    cached_tokens: 900,
    cache_write_tokens: 910,
    reasoning_tokens: 0,
  });
  await Deno.remove(dir, { recursive: true });
});
