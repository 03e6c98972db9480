/** Compaction inside a real `hermes run`, observed from the model's side through the OpenAI-compatible server. */
import assert from "node:assert/strict";
import { roleProblems } from "../../runtime/compaction/_testing.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

const WINDOW = 2000;
const STEPS = 8;

Deno.test("a session that crosses the threshold many times completes; requests stay under the window", async () => {
  const bulky = (i: number) => `Finding ${i}: ` + "the build log shows a long list of warnings. ".repeat(30);
  const turns: ScriptEntry[] = [];
  for (let i = 0; i <= STEPS; i++) {
    turns.push({ tool_calls: [{ name: "read_file", arguments: { path: "build.log" } }] });
    turns.push({ content: bulky(i) });
  }
  const summaries: ScriptEntry[] = Array.from({ length: 20 }, () => ({
    match: "<messages>",
    content: "Goal: triage the build. Progress: findings recorded. Next: keep going.",
  }));
  const server = await startOpenAIServer([...summaries, ...turns]);
  try {
    const steps = Array.from({ length: STEPS }, (_, i) => `"step ${i + 1}: look again"`).join(", ");
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: long
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: ${WINDOW} }
system: You triage builds.
prompt: FIRST PROMPT verbatim
steps: [${steps}]
tools:
  read_file: { paths: ["."] }
compaction: { threshold: 0.75, protect_first: 1, protect_last: 4 }
`,
      "build.log": "warning: deprecated API in use\n".repeat(40),
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    assert.ok(events.filter((e) => e.type === "compaction").length >= 2, "several compactions");
    assert.match(stderr, /^hermes info: \[compaction\] session \S+: summarize /m, "one [compaction] prefix");
    assert.doesNotMatch(stderr, /\[compaction:/);
    assert.equal(events.at(-1)!.compactions, events.filter((e) => e.type === "compaction").length);

    const agentRequests = server.requests.filter((r) => (r.tools?.length ?? 0) > 0);
    assert.equal(agentRequests.length, turns.length);
    for (const [i, request] of agentRequests.entries()) {
      const messages = request.messages as {
        role: string;
        content: string | null;
        tool_call_id?: string;
        tool_calls?: { id: string }[];
      }[];
      const chars = messages.reduce((n, m) => n + (m.content?.length ?? 0), 0);
      assert.ok(chars / 4 < WINDOW, `request ${i} is ${chars / 4} tokens`);
      assert.deepEqual(roleProblems(messages), [], `request ${i}: strict chat templates accept it`);
      assert.equal(messages[0]!.content, "You triage builds.");
      assert.equal(messages[1]!.content, "FIRST PROMPT verbatim");
      const calls = new Set<string>();
      for (const m of messages) {
        for (const call of m.tool_calls ?? []) calls.add(call.id);
        if (m.role === "tool") assert.ok(calls.has(m.tool_call_id!), `orphan tool result in request ${i}`);
      }
    }
    const last = agentRequests.at(-1)!.messages as { role: string; content: string | null }[];
    assert.ok(
      last.some((m) => m.content === `step ${STEPS}: look again`),
      "the latest user message is verbatim",
    );
  } finally {
    await server.close();
  }
});
