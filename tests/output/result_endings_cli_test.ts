/**
 * Results that never lie (docs/result.md): an answer the provider cut is not a success, a single answer past
 * `limits.max_tokens` ends with the limit, the result printed and the exit code agree, and every
 * `turn.start` has its `turn.end` — through the real CLI, against the scripted OpenAI-compatible server.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

const job = (url: string, extra = "", stream = false) =>
  `name: cut\nmodel: { name: m, base_url: "${url}", api_key_env: TEST_API_KEY, max_retries: 0, stream: ${stream} }\n` +
  `prompt: write it\ntools:\n  list_dir: { paths: ["."] }\n${extra}`;

async function runAgainst(script: ScriptEntry[], extra = "", stream = false) {
  const server = await startOpenAIServer(script);
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, extra, stream) });
    const run = await hermes(["run", "job.yaml", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { TEST_API_KEY: "k" },
    });
    return { ...run, result: JSON.parse(run.stdout) as Record<string, unknown> };
  } finally {
    await server.close();
  }
}

for (const stream of [false, true]) {
  Deno.test(`result (stream: ${stream}): finish_reason length → failed, output_truncated, exit 1`, async () => {
    const { code, result } = await runAgainst(
      [{ content: "The first half of the rep", wire: { finish_reason: "length" } }],
      "",
      stream,
    );
    assert.equal(code, 1);
    assert.equal(result.status, "failed");
    assert.equal(result.terminal_reason, "output_truncated");
    assert.equal(result.exit_code, 1);
    assert.match(String(result.error), /cut off by the output token limit/);
    assert.equal(result.final, "The first half of the rep", "the cut text is still reported");
  });
}

Deno.test("result: finish_reason content_filter → failed, content_filtered, exit 1", async () => {
  const { code, result } = await runAgainst([{ content: "", wire: { finish_reason: "content_filter" } }]);
  assert.equal(code, 1);
  assert.equal(result.terminal_reason, "content_filtered");
  assert.match(String(result.error), /content filter/);
});

Deno.test("result: a cut tool-call turn followed by a whole answer still succeeds (finish_reason stop)", async () => {
  const { code, result, stderr } = await runAgainst([
    { tool_calls: [{ name: "list_dir", arguments: { path: "." } }], wire: { finish_reason: "length" } },
    { content: "All done." },
  ]);
  assert.equal(code, 0, stderr);
  assert.equal(result.status, "success");
  assert.equal(result.terminal_reason, "completed");
  assert.equal(result.final, "All done.");
});

Deno.test("result: a single answer past limits.max_tokens ends with the limit (exit 3); within it succeeds", async () => {
  const over = await runAgainst(
    [{ content: "long answer", usage: { prompt_tokens: 70, completion_tokens: 50 } }],
    "limits: { max_tokens: 100 }\n",
  );
  assert.equal(over.code, 3);
  assert.equal(over.result.status, "limit");
  assert.equal(over.result.terminal_reason, "max_tokens");
  assert.equal(over.result.exit_code, 3);
  assert.equal(over.result.turns, 1);
  assert.match(String(over.result.error), /Stopped after 120 tokens: limits.max_tokens is 100/);
  const within = await runAgainst(
    [{ content: "short answer", usage: { prompt_tokens: 40, completion_tokens: 50 } }],
    "limits: { max_tokens: 100 }\n",
  );
  assert.equal(within.code, 0, within.stderr);
  assert.equal(within.result.status, "success");
});

Deno.test("result: a provider failure ends its turn: every turn.start has a turn.end, exit 1 agrees", async () => {
  const server = await startOpenAIServer([
    { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
    { error: { status: 500, message: "boom" } },
  ]);
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url) });
    const { code, events } = await runEvents(dir, { env: { TEST_API_KEY: "k" } });
    assert.equal(code, 1);
    const starts = events.filter((e) => e.type === "turn.start").map((e) => e.turn);
    const ends = events.filter((e) => e.type === "turn.end");
    assert.deepEqual(starts, [1, 2]);
    assert.deepEqual(ends.map((e) => e.turn), [1, 2]);
    assert.equal(ends[1]!.finish_reason, "error");
    assert.equal(ends[1]!.usage, null);
    const result = events.at(-1)!;
    assert.equal(result.type, "result");
    assert.equal(result.exit_code, 1);
    assert.equal(result.terminal_reason, "provider_error");
  } finally {
    await server.close();
  }
});
