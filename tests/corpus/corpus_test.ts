import assert from "node:assert/strict";
import { LOG_PATH, parseCallId, singlePromptCorpus, toolHeavyCorpus, turnsMentioned } from "./corpus.ts";
import { formatRanges, turnsCovered } from "./summaries.ts";

Deno.test("corpus: the same seed gives the same corpus, another seed another", () => {
  const a = toolHeavyCorpus({ turns: 30 });
  const b = toolHeavyCorpus({ turns: 30 });
  assert.deepEqual(a.prompts, b.prompts);
  assert.deepEqual(a.reads, b.reads);
  assert.deepEqual(a.files, b.files);
  const c = toolHeavyCorpus({ turns: 30, seed: 7 });
  assert.notDeepEqual(c.reads, a.reads);
  assert.notDeepEqual(c.files, a.files);
});

Deno.test("corpus: 300 turns, 2–60 KB results, the 24 KB log re-read on every other turn", () => {
  const corpus = toolHeavyCorpus();
  assert.equal(corpus.prompts.length, 300);
  assert.equal(corpus.files[LOG_PATH]!.length, 24 * 1024);
  for (const [path, content] of Object.entries(corpus.files)) {
    if (path === LOG_PATH) continue;
    assert.ok(content.length >= 2048 && content.length <= 60 * 1024, `${path}: ${content.length} bytes`);
  }
  corpus.reads.forEach((paths, i) => {
    assert.equal(paths[0] === LOG_PATH, (i + 1) % 2 === 0, `turn ${i + 1} reads ${paths.join(", ")}`);
    assert.equal(turnsMentioned(corpus.prompts[i]!)[0], i + 1);
  });
  const sizes = Object.values(corpus.files).map((c) => c.length);
  assert.ok(Math.max(...sizes) > 50 * 1024 && Math.min(...sizes) < 8 * 1024, "sizes spread over the range");
});

Deno.test("corpus: replies walk a turn's reads then answer; ids carry turn and step", () => {
  const corpus = toolHeavyCorpus({ turns: 4 });
  const turn = 2;
  const steps = corpus.reads[turn - 1]!;
  steps.forEach((path, step) => {
    const reply = corpus.reply(turn, step);
    assert.equal(reply.kind, "tool");
    if (reply.kind !== "tool") return;
    assert.deepEqual(JSON.parse(reply.arguments), { path });
    assert.deepEqual(parseCallId(reply.id), { turn, step });
  });
  const answer = corpus.reply(turn, steps.length);
  assert.equal(answer.kind, "answer");
  assert.throws(() => corpus.reply(5, 0), /no turn 5/);
});

Deno.test("corpus: the single-prompt task is one prompt then N tool calls, the log every other call", () => {
  const corpus = singlePromptCorpus({ toolCalls: 300 });
  assert.equal(corpus.prompts.length, 1);
  assert.equal(corpus.toolCalls, 300);
  assert.equal(corpus.reads[0]!.filter((p) => p === LOG_PATH).length, 150);
  assert.equal(corpus.reply(1, 300).kind, "answer");
});

Deno.test("corpus: the job runs every turn against the server with a summary model", () => {
  const corpus = toolHeavyCorpus({ turns: 3 });
  const yaml = corpus.jobYaml({
    base_url: "http://127.0.0.1:1/v1",
    window: 8000,
    compaction: "threshold: 0.5",
  });
  assert.match(yaml, /context_window: 8000/);
  assert.match(yaml, /summary_model: summary-model, threshold: 0.5/);
  for (const prompt of corpus.prompts) assert.ok(yaml.includes(JSON.stringify(prompt)), prompt);
});

Deno.test("summaries: covered turns are read back from markers and ranges", () => {
  assert.equal(formatRanges([5, 1, 2, 3, 9, 10]), "1–3, 5, 9–10");
  assert.deepEqual([...turnsCovered("User turns covered: 1–3, 5.\n[turn 8]")].sort((a, b) => a - b), [
    1,
    2,
    3,
    5,
    8,
  ]);
});
