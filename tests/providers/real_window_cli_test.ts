/**
 * The real window through the real CLI and scripted servers speaking llama.cpp's, Ollama's and OpenAI's wire
 * formats: a job that says 100 000 tokens against a server running far fewer compacts to the server's size —
 * told by /props or /api/show, named by a context_length_exceeded error, or seen in a truncated prompt count.
 */
import assert from "node:assert/strict";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, type ServerInfo, startOpenAIServer } from "../_testing/openai_server.ts";

const FILE = "a line of the build log that the agent reads to find the failing test.\n".repeat(140); // ~10 KB
const read = (path: string): ScriptEntry => ({ tool_calls: [{ name: "read_file", arguments: { path } }] });
const SUMMARIES: ScriptEntry[] = Array.from({ length: 6 }, () => ({
  match: "<messages>",
  content: "## Goal\nfind the failing test\n## Progress\nread the logs",
}));

function tokens(request: ChatRequestBody): number {
  let chars = 0;
  for (const m of request.messages ?? []) {
    chars += typeof m.content === "string" ? m.content.length : 0;
    for (const c of (m.tool_calls ?? []) as { function: { arguments: string } }[]) {
      chars += c.function.arguments.length;
    }
  }
  return Math.ceil(chars / 4);
}

async function run(script: ScriptEntry[], options: { serverInfo?: ServerInfo } = {}) {
  const server = await startOpenAIServer({ script: [...SUMMARIES, ...script], ...options });
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: window
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: 100000 }
prompt: first look
steps: ["second look", "third look"]
tools:
  read_file: { paths: ["."] }
compaction: { protect_first: 1, protect_last: 2 }
`,
    "a.log": FILE,
    "b.log": FILE.replaceAll("line", "LINE"),
    "c.log": FILE.replaceAll("agent", "AGENT"),
  });
  try {
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    const id = String(events.at(-1)!.session_id);
    const log =
      JSON.parse((await hermes(["sessions", "compactions", id, "--json"], { home: dir })).stdout).log;
    return {
      stderr,
      events,
      windows: log.map((r: { window_tokens: number }) => r.window_tokens),
      agent: server.requests.filter((r) => (r.tools?.length ?? 0) > 0),
    };
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const THREE_READS: ScriptEntry[] = [
  read("a.log"),
  { content: "read a" },
  read("b.log"),
  { content: "read b" },
  read("c.log"),
  { content: "read c" },
];

for (
  const [name, serverInfo, source] of [
    [
      "llama.cpp /props",
      { llamaCpp: { n_ctx: 6000 } },
      /llama\.cpp \/props default_generation_settings\.n_ctx/,
    ],
    [
      "Ollama /api/show",
      { ollama: { num_ctx: 6000, context_length: 131072 } },
      /Ollama \/api\/show parameters num_ctx/,
    ],
  ] as const
) {
  Deno.test(`real window: ${name} says 6000 tokens; compaction counts against it, every request fits`, async () => {
    const { stderr, windows, agent } = await run(THREE_READS, { serverInfo });
    assert.match(stderr, /the server runs a 6000-token context/);
    assert.match(stderr, source);
    assert.match(stderr, /less than the 100000 tokens compaction counted with: compacting to 6000/);
    assert.ok(windows.every((w: number) => w === 6000), `windows ${windows}`);
    for (const [i, request] of agent.entries()) {
      assert.ok(tokens(request) < 6000, `request ${i}: ${tokens(request)}`);
    }
    // Each ~10 KB result is over max_tool_result (0.2) of the server's window, not the job's: cut when stored.
    const results = agent.at(-1)!.messages!.filter((m) => m.role === "tool").map((m) => String(m.content));
    assert.equal(results.length, 3);
    assert.ok(results.every((r) => r.length <= 1200 * 4 && r.includes("compaction.max_tool_result")));
    assert.doesNotMatch(stderr, /truncated/);
  });
}

Deno.test("real window: a server that says nothing leaves the job's window (no compaction at this size)", async () => {
  const { stderr, windows, agent } = await run(THREE_READS);
  assert.deepEqual(windows, []);
  assert.doesNotMatch(stderr, /context \(|compacting to/);
  assert.ok(Math.max(...agent.map(tokens)) > 6000, "the requests grew past 6000 tokens unchecked");
  const results = agent.at(-1)!.messages!.filter((m) => m.role === "tool").map((m) => String(m.content));
  assert.ok(results.every((r) => r === FILE || r.length === FILE.length), "whole results");
});

Deno.test("real window: a server whose info routes never answer is given up at the probe's timeout; the run goes on with the job's window", async () => {
  // /props and /api/show hang until the server closes: only the probe's own timeout lets the first request go.
  const { stderr, windows, agent } = await run(THREE_READS, { serverInfo: { hang: true } });
  assert.deepEqual(windows, []);
  assert.doesNotMatch(stderr, /context \(|compacting to/);
  assert.equal(agent.length, 6, "each of the three steps read a file, then answered");
});

Deno.test("real window: a context_length_exceeded error naming the limit sets the window, then it fits", async () => {
  const overflow: ScriptEntry = {
    match: "third look",
    error: {
      status: 400,
      code: "context_length_exceeded",
      message:
        "This model's maximum context length is 6000 tokens. However, your messages resulted in 7812 tokens.",
    },
  };
  const { stderr, windows, agent } = await run([
    overflow,
    read("a.log"),
    { content: "read a" },
    read("b.log"),
    { content: "read b" },
    { match: "third look", ...read("c.log") },
    { content: "read c" },
  ]);
  assert.match(stderr, /the server rejected the prompt: its context is 6000 tokens/);
  assert.match(stderr, /compacting to 6000/);
  // The overflow recovery compacted against the named limit; the retry is smaller than the rejected request.
  assert.deepEqual(windows, [6000]);
  const rejected = agent.findIndex((r) => String(r.messages!.at(-1)!.content).includes("third look"));
  assert.ok(tokens(agent[rejected + 1]!) < tokens(agent[rejected]!) / 2, `${agent.map(tokens)}`);
  for (const request of agent.slice(rejected + 1)) assert.ok(tokens(request) < 6000, `${tokens(request)}`);
});

Deno.test("real window: a response counting far fewer prompt tokens than sent warns of truncation and compacts", async () => {
  const { stderr, windows, agent } = await run([
    read("a.log"),
    { content: "read a" },
    read("b.log"),
    // The server kept 2000 of the ~5000 tokens sent, without saying anything else.
    { content: "read b", usage: { prompt_tokens: 2000 } },
    read("c.log"),
    { content: "read c" },
  ]);
  assert.match(
    stderr,
    /hermes warn: the server counted 2000 prompt tokens for a request of about \d+: it truncated the prompt/,
  );
  assert.match(stderr, /compacting to 2000/);
  assert.ok(windows.length > 0 && windows.every((w: number) => w === 2000), `windows ${windows}`);
  const truncated = agent.findIndex((r) => tokens(r) > 4000);
  assert.ok(tokens(agent.at(-1)!) < tokens(agent[truncated]!), "later requests are compacted");
});
