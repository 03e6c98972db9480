/**
 * Repeated reads through the real CLI and the OpenAI-compatible server: a second read of an unchanged file
 * gets "unchanged since message #N"; a changed file, `tools.read_file.dedup: false`, and a read after
 * compaction summarised the earlier result away all get the full content.
 */
import assert from "node:assert/strict";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, startOpenAIServer } from "../_testing/openai_server.ts";

const NOTE = "a note that the model reads again and again. ".repeat(40);
const read = (id: string): ScriptEntry => ({
  tool_calls: [{ id, name: "read_file", arguments: { path: "note.txt" } }],
});

/** The content of the tool result answering call `id`, as the model got it in the last request. */
function resultOf(requests: ChatRequestBody[], id: string): string {
  const message = requests.at(-1)!.messages!.find((m) => m.role === "tool" && m.tool_call_id === id);
  assert.ok(message, `no result for ${id}`);
  return String(message.content);
}

async function run(
  script: ScriptEntry[],
  extra: { tools?: string; steps?: string; compaction?: string } = {},
) {
  const server = await startOpenAIServer(script);
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: reads
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: 100000 }
prompt: read the note
${extra.steps ?? ""}
tools:
  read_file: { paths: ["."]${extra.tools ?? ""} }
  write_file: { paths: ["."] }
${extra.compaction ?? ""}
`,
    "note.txt": NOTE,
  });
  try {
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    return { requests: server.requests, events };
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("read dedup: an unchanged re-read is a short note; after a write the file is read in full", async () => {
  const { requests, events } = await run([
    read("r1"),
    read("r2"),
    { tool_calls: [{ id: "w1", name: "write_file", arguments: { path: "note.txt", content: "changed" } }] },
    read("r3"),
    read("r4"),
    { content: "done" },
  ]);
  assert.equal(resultOf(requests, "r1"), NOTE);
  const seq =
    /^unchanged since message #(\d+): note\.txt has the same content as the read_file result of call r1/
      .exec(resultOf(requests, "r2"));
  assert.ok(seq, resultOf(requests, "r2"));
  // The number is the earlier result's message number in the store (`sessions show`): user 1, call 2, result 3.
  assert.equal(Number(seq[1]), 3);
  // The allowed case: the file changed, so it is read in full — and an unchanged read after it points there.
  assert.equal(resultOf(requests, "r3"), "changed");
  assert.match(resultOf(requests, "r4"), /^unchanged since message #\d+: note\.txt .* call r3/);
  const results = events.filter((e) => e.type === "tool.result" && e.tool === "read_file");
  assert.equal(results.length, 4);
  assert.match(
    String(results[1]!.content),
    /^unchanged since message #/,
    "the event shows what the model got",
  );
});

Deno.test("read dedup: tools.read_file.dedup: false reads in full every time", async () => {
  const { requests } = await run([read("r1"), read("r2"), { content: "done" }], { tools: ", dedup: false" });
  assert.equal(resultOf(requests, "r1"), NOTE);
  assert.equal(resultOf(requests, "r2"), NOTE);
});

Deno.test("read dedup: reset by compaction — once the earlier result is summarised away, a read is full", async () => {
  const { requests } = await run(
    [
      { match: "<messages>", content: "## Goal\nread the note\n## Progress\nread it once" },
      read("r1"),
      { content: "read it" },
      read("r2"),
      { content: "done" },
    ],
    {
      steps: 'steps: ["/compress", "read the note again"]',
      compaction: "compaction: { protect_first: 1, protect_last: 1 }",
    },
  );
  const agent = requests.filter((r) => (r.tools?.length ?? 0) > 0);
  assert.ok(!agent.at(-1)!.messages!.some((m) => m.tool_call_id === "r1"), "r1 was compacted away");
  assert.equal(resultOf(agent, "r2"), NOTE);
});
