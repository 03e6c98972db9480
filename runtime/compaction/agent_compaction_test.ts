/** The compactor wired into the real agent loop, against a model that enforces its window and message rules. */
import assert from "node:assert/strict";
import { Agent } from "../agent/agent.ts";
import { ManualClock } from "../core/_testing.ts";
import { Budget } from "../agent/limits.ts";
import { silentLogger } from "../core/log.ts";
import {
  type ModelRequest,
  type ModelResponse,
  type Provider,
  ProviderError,
} from "../providers/provider.ts";
import type { Tool } from "../tools/tool.ts";
import type { Compactor } from "../agent/seams.ts";
import {
  compactorFor,
  type Fixture,
  fixture,
  linesOf,
  orphanProblems,
  roleProblems,
  SHORT_SUMMARY,
  TESTDATA,
  transcript,
  waitForLine,
} from "./_testing.ts";
import { approxTokens, estimateMessages } from "./estimate.ts";
import { sessionOccupancy } from "./occupancy.ts";
import { SUMMARY_PREFIX } from "./summary.ts";

const WINDOW = 6000;
const SYSTEM = "You are a careful release engineer.";
const FIRST = "FIRST PROMPT: read the logs, three at a time";

/**
 * A model like a real endpoint: rejects a request over its window (HTTP 400, context length) or with a tool
 * result that does not answer a preceding tool call; reports real prompt_tokens; reads three logs per turn.
 */
function strictModel(window: number) {
  const requests: { tokens: number; messages: ModelRequest["messages"] }[] = [];
  const violations: string[] = [];
  let calls = 0;
  const provider: Provider = {
    name: "strict",
    complete(request: ModelRequest): Promise<ModelResponse> {
      const tokens = request.messages.reduce((sum, m) => sum + approxTokens(m), 0);
      if (request.messages[0]?.content.startsWith("You compact the transcript")) {
        return Promise.resolve({
          message: { role: "assistant", content: SHORT_SUMMARY },
          usage: null,
          finish_reason: "stop",
        });
      }
      violations.push(...orphanProblems(request.messages), ...roleProblems(request.messages));
      if (tokens > window) {
        return Promise.reject(
          new ProviderError(`HTTP 400 context_length_exceeded: ${tokens} > ${window}`, {
            status: 400,
            contextOverflow: true,
          }),
        );
      }
      requests.push({ tokens, messages: request.messages });
      const lastUser = request.messages.findLastIndex((m) =>
        m.role === "user" && !m.content.startsWith(SUMMARY_PREFIX)
      );
      const toolResults = request.messages.slice(lastUser).filter((m) => m.role === "tool").length;
      calls++;
      const message: ModelResponse["message"] = toolResults < 3
        ? {
          role: "assistant",
          content: "",
          tool_calls: [{ id: `c${calls}`, name: "read_log", arguments: `{"n":${calls}}` }],
        }
        : { role: "assistant", content: `done with turn after call ${calls}: `.padEnd(1000, "y") };
      return Promise.resolve({
        message,
        usage: { prompt_tokens: tokens, completion_tokens: 10 },
        finish_reason: message.tool_calls ? "tool_calls" : "stop",
      });
    },
  };
  return { provider, requests, violations };
}

const readLog: Tool = {
  spec: { name: "read_log", description: "Read a log", parameters: { type: "object" } },
  run: (args) => Promise.resolve({ status: "ok", content: `log ${args.n}: `.padEnd(1200, "x") }),
};

function agentFor(
  fx: Fixture,
  provider: Provider,
  contextWindow: number,
  compactor: Compactor = compactorFor(fx, { provider, context_window: contextWindow }),
) {
  fx.store.appendMessages(fx.sessionId, [{ role: "system", content: SYSTEM }]);
  return new Agent({
    store: fx.store,
    sessionId: fx.sessionId,
    provider,
    model: "main",
    tools: [readLog],
    hooks: fx.hooks,
    events: fx.bus,
    clock: fx.clock,
    log: silentLogger,
    budget: new Budget(),
    toolContext: { job_dir: fx.dir, env: {}, host_env: {} },
    compactor,
  });
}

Deno.test("agent + compaction: a long session crosses the threshold repeatedly and every request stays valid", async () => {
  await using fx = await fixture(new ManualClock());
  const model = strictModel(WINDOW);
  const agent = agentFor(fx, model.provider, WINDOW);
  await agent.prompt(FIRST, { source: "job" });
  for (let i = 1; i < 25; i++) await agent.prompt(`step ${i}: read more logs`, { source: "job" });

  const compactions = fx.events.filter((e) => e.type === "compaction");
  assert.ok(compactions.length >= 3, `expected several compactions, got ${compactions.length}`);
  assert.ok(compactions.some((e) => e.kind === "summarize"), "at least one summary");
  assert.deepEqual(
    model.violations,
    [],
    "no request separated a tool call from its results or had two messages of one role in a row",
  );
  assert.equal(fx.postCompaction.length, compactions.length);
  for (const [i, { tokens, messages }] of model.requests.entries()) {
    assert.ok(tokens < WINDOW * 0.75 + 400, `request ${i}: ${tokens} tokens`);
    assert.equal(messages[0]?.content, SYSTEM, `request ${i}: system prompt kept`);
    assert.equal(messages[1]?.content, FIRST, `request ${i}: first prompt kept verbatim`);
    // The tail is a token budget; what the model just asked for (the newest message) is always whole.
    const newest = messages.at(-1)!;
    assert.ok(
      !newest.content.startsWith(SUMMARY_PREFIX) && !newest.content.startsWith("[tool result pruned"),
      `request ${i}: the newest message is verbatim`,
    );
  }
  const last = model.requests.at(-1)!.messages;
  assert.equal(
    last.filter((m) => m.content.startsWith(SUMMARY_PREFIX)).length,
    1,
    "one summary, updated in place",
  );
  assert.ok(last.some((m) => m.content === "step 24: read more logs"), "the latest user message is present");
});

Deno.test("agent + compaction: a request rejected as too long is compacted once and retried", async () => {
  await using fx = await fixture(new ManualClock());
  // The compactor believes the window is far larger than what the endpoint accepts: only overflow recovery helps.
  const model = strictModel(WINDOW);
  const agent = agentFor(fx, model.provider, 100 * WINDOW);
  await agent.prompt(FIRST, { source: "job" });
  for (let i = 1; i < 10; i++) await agent.prompt(`step ${i}: read more logs`, { source: "job" });
  const compactions = fx.events.filter((e) => e.type === "compaction");
  assert.ok(compactions.length >= 1);
  assert.ok(compactions.every((e) => e.reason === "overflow"));
  assert.deepEqual(model.violations, []);
  assert.ok(model.requests.every((r) => r.tokens <= WINDOW));
});

Deno.test("agent + compaction: /status shows the session's occupancy, as RPC session.get computes it", async () => {
  await using fx = await fixture(new ManualClock());
  const model = strictModel(WINDOW);
  const agent = agentFor(fx, model.provider, WINDOW);
  await agent.prompt(FIRST, { source: "job" });
  const stored = await sessionOccupancy(fx.store, fx.sessionId, { context_window: WINDOW });
  assert.ok(stored.tokens > 0);
  assert.equal(stored.threshold_tokens, 4500);
  assert.equal(stored.occupancy, stored.tokens / 4500);
  const status = (await agent.input("/status", { source: "cli" })).final;
  assert.match(
    status,
    new RegExp(
      `^context: ~${stored.tokens} tokens, ${
        Math.round(stored.occupancy * 100)
      }% of the compaction threshold ` +
        `\\(4500 of a 6000-token window\\)$`,
      "m",
    ),
  );
});

Deno.test("agent + compaction: micro-compaction runs after each turn; requests keep every user message", async () => {
  await using fx = await fixture(new ManualClock());
  const model = strictModel(WINDOW);
  const compactor = compactorFor(fx, {
    provider: model.provider,
    context_window: WINDOW,
    // As for a provider without a prompt cache: every fold pays.
    config: { micro: { enabled: true, threshold: 0.5, payback: 100_000 } },
  });
  const agent = agentFor(fx, model.provider, WINDOW, compactor);
  await agent.prompt(FIRST, { source: "job" });
  for (let i = 1; i < 25; i++) await agent.prompt(`step ${i}: read more logs`, { source: "job" });
  const micro = fx.events.filter((e) => e.type === "compaction" && e.kind === "micro_summarize");
  assert.ok(micro.length >= 5, `${micro.length} micro passes`);
  assert.deepEqual(model.violations, []);
  for (const [i, { messages }] of model.requests.entries()) {
    const users = messages.filter((m) => m.role === "user").map((m) => m.content).join("\n\n");
    const asked = [FIRST, ...Array.from({ length: 24 }, (_, k) => `step ${k + 1}: read more logs`)];
    const seen = asked.filter((text) => users.includes(text)).length;
    assert.ok(seen >= 1 && asked.slice(0, seen).every((text) => users.includes(text)), `request ${i}`);
  }
});

Deno.test("agent + compaction: a compactor that fails between turns does not fail the turn", async () => {
  await using fx = await fixture(new ManualClock());
  const model = strictModel(WINDOW);
  const real = compactorFor(fx, { provider: model.provider, context_window: WINDOW });
  const failing: Compactor = { ...real, afterTurn: () => Promise.reject(new Error("store is gone")) };
  const agent = agentFor(fx, model.provider, WINDOW, failing);
  const result = await agent.prompt(FIRST, { source: "job" });
  assert.match(result.final, /^done with turn/);
});

Deno.test("agent + compaction: while another process holds the lease, an over-window request is sent as an uncommitted fallback", async () => {
  await using fx = await fixture(new ManualClock());
  const model = strictModel(WINDOW);
  const agent = agentFor(fx, model.provider, WINDOW);
  await fx.store.appendMessages(fx.sessionId, transcript(12, { toolChars: 2400 }).slice(1));
  assert.ok(
    estimateMessages(await fx.store.activeMessages(fx.sessionId)) > WINDOW,
    "stored: over the window",
  );
  await withLeaseHeld(fx, async () => {
    // Before the fix the request went out over the window, and the overflow recovery could not take the lease.
    const held = await agent.prompt("step 1: read more logs", { source: "job" });
    assert.match(held.final, /^done with turn/);
    assert.ok(model.requests.length >= 4);
    for (const [i, { tokens, messages }] of model.requests.entries()) {
      assert.ok(tokens <= WINDOW, `request ${i}: ${tokens} tokens`);
      assert.ok(messages.some((m) => m.content.startsWith("[tool result pruned")), `request ${i}: pruned`);
      assert.ok(
        messages.some((m) => m.content.includes("step 1: read more logs")),
        `request ${i}: the prompt`,
      );
    }
    assert.deepEqual(model.violations, []);
    // Nothing was written under the other process's lease: every stored row is active, no pass committed.
    assert.ok((await fx.store.allMessages(fx.sessionId)).every((m) => m.active));
    assert.equal(fx.events.filter((e) => e.type === "compaction").length, 0);
    assert.ok(estimateMessages(await fx.store.activeMessages(fx.sessionId)) > WINDOW);
  });
  // Once the lease is free, the next request compacts the stored transcript itself.
  await agent.prompt("step 2: read more logs", { source: "job" });
  assert.ok(fx.events.some((e) => e.type === "compaction"));
  assert.ok(model.requests.every((r) => r.tokens <= WINDOW));
  assert.ok(estimateMessages(await fx.store.activeMessages(fx.sessionId)) <= WINDOW);
});

Deno.test("agent + compaction: a request rejected as too long while another process holds the lease is retried as an uncommitted fallback", async () => {
  await using fx = await fixture(new ManualClock());
  // The compactor believes the window is far larger than what the endpoint accepts: only overflow recovery helps.
  const model = strictModel(WINDOW);
  const agent = agentFor(fx, model.provider, 100 * WINDOW);
  await fx.store.appendMessages(fx.sessionId, transcript(12, { toolChars: 2400 }).slice(1));
  await withLeaseHeld(fx, async () => {
    // Before the fix the overflow recovery could not take the lease, and the run failed.
    const held = await agent.prompt("step 1: read more logs", { source: "job" });
    assert.match(held.final, /^done with turn/);
    assert.ok(model.requests.every((r) => r.tokens <= WINDOW));
    assert.deepEqual(model.violations, []);
    assert.ok((await fx.store.allMessages(fx.sessionId)).every((m) => m.active), "nothing written");
  });
  // With the lease free, overflow recovery compacts the stored transcript.
  await agent.prompt("step 2: read more logs", { source: "job" });
  assert.ok(fx.events.some((e) => e.type === "compaction" && e.reason === "overflow"));
});

/** Runs `during` while a real second process holds the session's compaction lease. */
async function withLeaseHeld(fx: Fixture, during: () => Promise<void>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${TESTDATA}acquire_lease.ts`, fx.path, fx.sessionId],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = linesOf(child.stdout);
  const stdin = child.stdin.getWriter();
  try {
    await waitForLine(lines, (line) => line === "ready");
    await stdin.write(new TextEncoder().encode("go\n"));
    assert.equal(await waitForLine(lines, (line) => line.startsWith("{")), '{"acquired":true}');
    await during();
  } finally {
    await stdin.close();
    while (!(await lines.next()).done) { /* drain */ }
    await child.status;
  }
}
