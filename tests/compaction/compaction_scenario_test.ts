/**
 * A tool-heavy CI session through the real CLI and the OpenAI-compatible test server: a
 * 128 000-token window, the agent reads a 58 KB log nine times in one turn. The protected tail (20 messages by
 * count) holds every result; only its token budget, pruning old results in it, keeps the requests under the
 * window. Every request is also checked against strict chat templates (no two messages of one role in a row).
 * The repeated-read note is off (`dedup: false`): it would keep one copy of the unchanged log, and this
 * scenario is about the tail holding nine.
 */
import assert from "node:assert/strict";
import { orphanProblems, roleProblems } from "../../runtime/compaction/_testing.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, startOpenAIServer } from "../_testing/openai_server.ts";

const WINDOW = 128_000;

type Sent = {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { arguments: string } }[];
};

/** chars/4 of a request as it was sent (content and tool call arguments). */
function requestTokens(request: ChatRequestBody): number {
  const messages = request.messages as Sent[];
  let chars = 0;
  for (const m of messages) {
    chars += m.content?.length ?? 0;
    for (const call of m.tool_calls ?? []) chars += call.function.arguments.length;
  }
  return Math.ceil(chars / 4);
}

function logFile(bytes: number): string {
  const lines: string[] = [];
  for (let i = 0; lines.join("\n").length < bytes; i++) {
    lines.push(
      `2026-01-01T00:00:${String(i % 60).padStart(2, "0")}Z step ${i}: npm test -- shard ${i % 7} ok`,
    );
  }
  return lines.join("\n").slice(0, bytes);
}

Deno.test("scenario: nine reads of a 58 KB log in a 128k window complete, every request under the window", async () => {
  const reads: ScriptEntry[] = Array.from({ length: 9 }, () => ({
    tool_calls: [{ name: "read_file", arguments: { path: "ci.log" } }],
  }));
  const summaries: ScriptEntry[] = Array.from({ length: 5 }, () => ({
    match: "<messages>",
    content: "## Goal\nTriage CI.\n## Progress\nRead ci.log.",
  }));
  const server = await startOpenAIServer([...summaries, ...reads, { content: "The flaky shard is 3." }]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: ci-triage
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: ${WINDOW} }
system: You triage CI failures.
prompt: Read ci.log until you know which shard is flaky.
tools:
  read_file: { paths: ["."], dedup: false }
`,
      "ci.log": logFile(58_000),
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    assert.equal(events.at(-1)!.final, "The flaky shard is 3.");
    assert.doesNotMatch(stderr, /every message is protected/);

    const agentRequests = server.requests.filter((r) => (r.tools?.length ?? 0) > 0);
    assert.equal(agentRequests.length, 10);
    for (const [i, request] of agentRequests.entries()) {
      const messages = request.messages as Sent[];
      assert.ok(requestTokens(request) < WINDOW, `request ${i}: ${requestTokens(request)} tokens`);
      assert.deepEqual(roleProblems(messages), [], `request ${i}`);
      assert.deepEqual(orphanProblems(messages), [], `request ${i}`);
      assert.equal(messages[1]!.content, "Read ci.log until you know which shard is flaky.");
      // The newest result is always whole: the model has just asked for it.
      if (messages.at(-1)!.role === "tool") assert.equal(messages.at(-1)!.content!.length, 58_000);
    }
    const compactions = events.filter((e) => e.type === "compaction");
    assert.ok(compactions.length >= 1);
    assert.ok(compactions.every((e) => e.kind === "prune_tool_results" && e.reason === "post_tool"));
    assert.ok(compactions.every((e) => (e.occupancy as number) < 1), "each pass got under the threshold");

    // The pruned results say how to get them back, and they are there.
    const last = agentRequests.at(-1)!.messages as Sent[];
    const placeholder = last.find((m) => m.content?.startsWith("[tool result pruned by compaction"))!;
    const sessionId = String(events.at(-1)!.session_id);
    assert.equal(
      placeholder.content,
      `[tool result pruned by compaction: 58000 characters from read_file; the original is archived: ` +
        `hermes sessions show ${sessionId} --all]`,
    );
    const shown = await hermes(["sessions", "show", sessionId, "--all", "--json"], { cwd: dir, home: dir });
    const archived =
      (JSON.parse(shown.stdout).messages as { active: boolean; role: string; content: string }[])
        .filter((m) => !m.active && m.role === "tool");
    assert.ok(archived.length >= 1 && archived.every((m) => m.content.length === 58_000));
  } finally {
    await server.close();
  }
});

Deno.test("scenario: a tool result over max_tool_result is cut when stored; the full text stays recoverable", async () => {
  const server = await startOpenAIServer([
    { tool_calls: [{ name: "read_file", arguments: { path: "huge.log" } }] },
    { content: "read it" },
  ]);
  try {
    const window = 20_000;
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: huge
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: ${window} }
prompt: Read huge.log.
tools:
  read_file: { paths: ["."] }
compaction: { max_tool_result: 0.1 }
`,
      "huge.log": logFile(100_000),
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    const second = server.requests[1]!.messages as Sent[];
    assert.ok(requestTokens(server.requests[1]!) < window, `${requestTokens(server.requests[1]!)} tokens`);
    const cut = second.at(-1)!;
    assert.equal(cut.role, "tool");
    assert.ok(cut.content!.length <= 0.1 * window * 4, `${cut.content!.length} characters`);
    assert.match(cut.content!, /characters cut from this tool result/);
    const full = logFile(100_000);
    assert.ok(cut.content!.startsWith(full.slice(0, 1000)) && cut.content!.endsWith(full.slice(-1000)));
    const result = events.find((e) => e.type === "tool.result")!;
    assert.equal((result.content as string).length, 100_000, "plugins and clients see the whole result");

    const sessionId = String(events.at(-1)!.session_id);
    const shown = await hermes(["sessions", "show", sessionId, "--all", "--json"], { cwd: dir, home: dir });
    const tools = (JSON.parse(shown.stdout).messages as { active: boolean; role: string; content: string }[])
      .filter((m) => m.role === "tool");
    assert.deepEqual(tools.map((m) => [m.active, m.content.length === 100_000]), [[false, true], [
      true,
      false,
    ]]);
  } finally {
    await server.close();
  }
});

Deno.test("scenario: a summary_context_window too small for one summary request is named at session start", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: tiny-summary
model: { provider: scripted, script: ./r.yaml }
prompt: hello
compaction: { summary_model: tiny, summary_context_window: 800 }
`,
    "r.yaml": "- content: hi\n",
  });
  const { code, stderr } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.match(
    stderr,
    /\[compaction\] the summary model's window \(800 tokens, compaction\.summary_context_window\)/,
  );
});
