/**
 * Cost through the real CLI against the scripted OpenAI-compatible server: `cost_usd` per model call on
 * `turn.end` and summed in the result by the price table or `model.pricing` (job or config.yaml);
 * `--max-budget-usd` / `limits.max_cost_usd` stop a run before a call that would pass the cap and in the
 * middle of a streamed reply (exit 3, terminal_reason max_cost); a model without a price reports
 * `cost_usd: null`, and a cap on it is exit 2 before any model call.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { PRICES_TAKEN } from "../../runtime/providers/pricing.ts";

async function serve(script: ScriptEntry[], chunkChars?: number, chunkDelayMs?: number) {
  const server = await startOpenAIServer({
    script,
    ...(chunkChars ? { chunkChars } : {}),
    ...(chunkDelayMs ? { chunkDelayMs } : {}),
  });
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.close() });
}

function job(url: string, model: string, extra = "") {
  return `name: costly\nmodel: { name: ${model}, base_url: "${url}", api_key_env: none${extra} }\n` +
    `prompt: look around\ntools:\n  list_dir: { paths: ["."] }\n`;
}

const toolRound: ScriptEntry[] = [
  {
    tool_calls: [{ name: "list_dir", arguments: { path: "." } }],
    usage: { prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400 },
  },
  { content: "two files", usage: { prompt_tokens: 1500, completion_tokens: 100 } },
];

Deno.test("cost: cost_usd on each turn.end and in the result matches the price table (gpt-4.1-mini)", async () => {
  await using server = await serve(toolRound);
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, "gpt-4.1-mini-2025-04-14") });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  // gpt-4.1-mini's list price: $0.40 input, $0.10 cached input, $1.60 output per million tokens.
  const first = (600 * 0.4 + 400 * 0.1 + 200 * 1.6) / 1e6;
  const second = (1500 * 0.4 + 100 * 1.6) / 1e6;
  const ends = events.filter((e) => e.type === "turn.end");
  assert.deepEqual(ends.map((e) => e.cost_usd), [first, second].map(near));
  const result = events.at(-1)!;
  assert.equal(result.cost_usd, near(first + second));
  assert.equal(PRICES_TAKEN.length, 10);
  const shown = await hermes(["sessions", "show", String(result.session_id), "--json"], { home: dir });
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(JSON.parse(shown.stdout).session.cost_usd, near(first + second));
  const text = await hermes(["sessions", "show", String(result.session_id)], { home: dir });
  assert.match(
    text.stdout,
    /tokens 2500 prompt \(400 cache read, 0 cache write\) \/ 300 completion \(0 reasoning\) · cost \$0\.0014/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("cost: model.pricing in config.yaml overrides the table, and the job's wins over config.yaml", async () => {
  await using server = await serve([...toolRound, ...toolRound]);
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, "gpt-4.1-mini"),
    "config.yaml": "model:\n  pricing: { input: 10, output: 20 }\n",
  });
  const fromConfig = await runEvents(dir);
  assert.equal(fromConfig.code, 0, fromConfig.stderr);
  // No cached_input given: cached tokens cost the input price.
  assert.equal(fromConfig.events.at(-1)!.cost_usd, near((1000 * 10 + 200 * 20 + 1500 * 10 + 100 * 20) / 1e6));
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    job(server.url, "gpt-4.1-mini", ", pricing: { input: 1, output: 2, cached_input: 0.5 }"),
  );
  const fromJob = await runEvents(dir);
  assert.equal(fromJob.code, 0, fromJob.stderr);
  assert.equal(
    fromJob.events.at(-1)!.cost_usd,
    near((600 * 1 + 400 * 0.5 + 200 * 2 + 1500 * 1 + 100 * 2) / 1e6),
  );
  await Deno.remove(dir, { recursive: true });
});

// $1000 per million tokens: a token costs a tenth of a cent, so the caps below are easy to read.
const dear = ", pricing: { input: 1000, output: 1000 }";

Deno.test("cost: --max-budget-usd stops before the request that would pass it (exit 3, max_cost)", async () => {
  await using server = await serve([
    {
      tool_calls: [{ name: "list_dir", arguments: { path: "." } }],
      usage: { prompt_tokens: 100, completion_tokens: 10 },
    },
    { content: "never sent" },
  ]);
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, "my-model", dear) });
  // The first call costs $0.11; the second's input alone (~100 tokens, $0.10) would pass $0.15.
  const { code, stdout, stderr } = await hermes([
    "run",
    "job.yaml",
    "--output",
    "json",
    "--max-budget-usd",
    "0.15",
  ], {
    cwd: dir,
    home: dir,
  });
  assert.equal(code, 3, stderr);
  const result = JSON.parse(stdout);
  assert.deepEqual([result.status, result.terminal_reason, result.exit_code], ["limit", "max_cost", 3]);
  assert.match(
    result.error,
    /Stopped before a model call whose input is estimated at \$0\.\d+: this prompt had spent \$0\.11 of limits\.max_cost_usd \$0\.15/,
  );
  assert.equal(result.cost_usd, 0.11);
  assert.equal(server.requests.length, 1, "the second request was never sent");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("cost: under the cap the same run completes (exit 0) and sends both requests", async () => {
  await using server = await serve([
    {
      tool_calls: [{ name: "list_dir", arguments: { path: "." } }],
      usage: { prompt_tokens: 100, completion_tokens: 10 },
    },
    { content: "done", usage: { prompt_tokens: 120, completion_tokens: 5 } },
  ]);
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, "my-model", dear) + "limits: { max_cost_usd: 0.5 }\n",
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(events.at(-1)!.cost_usd, 0.235);
  assert.equal(server.requests.length, 2);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("cost: the cap stops a streamed reply between chunks, not after it (exit 3, max_cost)", async () => {
  // 4000 characters streamed 8 at a time, a millisecond apart: about 1000 output tokens, $1 at this price; the
  // cap is $0.20. Paced, so the stop lands mid-stream rather than after a reply that arrived whole.
  await using server = await serve([{ content: "word ".repeat(800) }], 8, 1);
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job(server.url, "my-model", `${dear}, stream: true`),
  });
  const { code, stdout, stderr } = await hermes([
    "run",
    "job.yaml",
    "--output",
    "json",
    "--max-budget-usd",
    "0.2",
  ], {
    cwd: dir,
    home: dir,
  });
  assert.equal(code, 3, stderr);
  const result = JSON.parse(stdout);
  assert.deepEqual([result.status, result.terminal_reason], ["limit", "max_cost"]);
  assert.match(result.error, /Stopped a streaming reply at an estimated \$0\.2/);
  // The part that streamed is billed and counted (estimated): well short of the whole reply.
  assert.ok(result.usage.completion_tokens > 100 && result.usage.completion_tokens < 250, stdout);
  // Stopped at the first chunk whose estimate passes the cap: at most one chunk (2 tokens here) over it.
  assert.ok(result.cost_usd > 0.2 && result.cost_usd <= 0.203, stdout);
  assert.match(stderr, /the reply was stopped at about \d+ output tokens; its cost is estimated at \$0\.2/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("cost: a model without a known price reports cost_usd null; a cap on it is exit 2 before any call", async () => {
  await using server = await serve([{ content: "fine", usage: { prompt_tokens: 10, completion_tokens: 2 } }]);
  const dir = await writeFiles(await tempDir(), { "job.yaml": job(server.url, "local-llama") });
  const free = await runEvents(dir);
  assert.equal(free.code, 0, free.stderr);
  assert.equal(free.events.at(-1)!.cost_usd, null);
  assert.deepEqual(free.events.filter((e) => e.type === "turn.end").map((e) => e.cost_usd), [null]);
  assert.equal(server.requests.length, 1);

  const capped = await hermes(["run", "job.yaml", "--max-budget-usd", "1"], { cwd: dir, home: dir });
  assert.equal(capped.code, 2, capped.stderr);
  assert.match(
    capped.stderr,
    /Cannot enforce limits\.max_cost_usd \(--max-budget-usd\): model "local-llama" has no known price .*set model\.pricing/,
  );
  assert.doesNotMatch(capped.stderr, /at .*\.ts:\d+/, "no stack trace");
  assert.equal(server.requests.length, 1, "no model call");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("cost: --max-budget-usd that is not a positive amount is exit 2 naming the flag", async () => {
  const dir = await tempDir();
  const { code, stderr } = await hermes(["run", "-p", "hi", "--max-budget-usd", "lots"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(code, 2);
  assert.match(stderr, /invalid --max-budget-usd "lots": expected a positive amount of dollars/);
  await Deno.remove(dir, { recursive: true });
});

/** Dollars as the result reports them (to a billionth), for comparing sums computed here. */
function near(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
