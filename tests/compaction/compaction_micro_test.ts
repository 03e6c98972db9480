/**
 * Micro-compaction through the real CLI and the OpenAI-compatible test server: a 300-turn,
 * tool-heavy session, run once with micro-compaction and once without. `payback: 1000` makes every fold pay
 * (as for a provider without a prompt cache), so the folding itself is what is tested here. With it, every request keeps every user
 * message verbatim, never carries two rolling summaries, and fewer hard compactions fire; both ways every
 * request stays under the window and passes the strict-template check. The log is read in full every turn
 * (`dedup: false`): the repeated-read note would keep the session too small to need either.
 */
import assert from "node:assert/strict";
import { roleProblems } from "../../runtime/compaction/_testing.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const TURNS = 300;
const WINDOW = 8000;
const PREFIX = "[Hermes compaction summary]";

type Sent = { role: string; content: string | null; tool_calls?: { function: { arguments: string } }[] };

async function session(micro: boolean) {
  const script: ScriptEntry[] = Array.from({ length: 2 * TURNS }, () => ({
    match: "<messages>",
    content: "## Goal\nKeep CI green.\n## Progress\nRead the build log after each step.",
  }));
  for (let i = 1; i <= TURNS; i++) {
    script.push(
      { tool_calls: [{ name: "read_file", arguments: { path: "build.log" } }] },
      { content: `turn ${i}: the build is still green` },
    );
  }
  const server = await startOpenAIServer(script);
  try {
    const steps = Array.from({ length: TURNS - 1 }, (_, i) => `"step ${i + 2}: check the build again"`);
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: watch
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: ${WINDOW} }
system: You watch a CI build.
prompt: "step 1: check the build"
steps: [${steps.join(", ")}]
tools:
  read_file: { paths: ["."], dedup: false }
compaction: { micro: { enabled: ${micro}, threshold: 0.5, payback: 1000 } }
`,
      "build.log": "ok: all 412 tests passed in 3m12s\n".repeat(60),
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr.slice(-2000));
    const requests = server.requests.filter((r) => (r.tools?.length ?? 0) > 0).map((r) =>
      r.messages as Sent[]
    );
    assert.equal(requests.length, 2 * TURNS);
    const compactions = events.filter((e) => e.type === "compaction");
    return { requests, compactions, hard: compactions.filter((e) => e.kind === "summarize").length };
  } finally {
    await server.close();
  }
}

function tokens(messages: Sent[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content?.length ?? 0;
    for (const call of m.tool_calls ?? []) chars += call.function.arguments.length;
  }
  return Math.ceil(chars / 4);
}

Deno.test("micro: a 300-turn tool-heavy session keeps every user message and fires fewer hard compactions", async () => {
  const off = await session(false);
  const on = await session(true);
  for (const run of [off, on]) {
    for (const [i, messages] of run.requests.entries()) {
      assert.ok(tokens(messages) < WINDOW, `request ${i}: ${tokens(messages)} tokens`);
      assert.deepEqual(roleProblems(messages), [], `request ${i}: strict chat templates accept it`);
    }
  }
  assert.ok(off.hard >= 3, `without micro, hard compactions fire (${off.hard})`);
  assert.ok(on.hard < off.hard, `with micro ${on.hard} hard compactions, without ${off.hard}`);
  assert.ok(on.compactions.filter((e) => e.kind === "micro_summarize").length >= 100);
  assert.ok(on.compactions.every((e) => e.kind !== "micro_summarize" || e.reason === "between_turns"));

  for (const [i, messages] of on.requests.entries()) {
    const turn = Math.floor(i / 2) + 1;
    const userText = messages.filter((m) => m.role === "user").map((m) => m.content ?? "").join("\n\n");
    for (let t = 1; t <= turn; t++) {
      const text = t === 1 ? "step 1: check the build" : `step ${t}: check the build again`;
      assert.ok(userText.includes(text), `request ${i}: user message ${t} is there, verbatim`);
    }
    const order = [...userText.matchAll(/step (\d+):/g)].map((m) => Number(m[1]));
    assert.deepEqual(order, Array.from({ length: turn }, (_, k) => k + 1), `request ${i}: in order`);
    const summaries = messages.reduce((n, m) => n + (m.content?.split(PREFIX).length ?? 1) - 1, 0);
    assert.ok(summaries <= 1, `request ${i}: ${summaries} summaries`);
  }
});
