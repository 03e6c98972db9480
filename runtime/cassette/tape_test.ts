import assert from "node:assert/strict";
import { recordingTape, ReplayDiverged, replayTape } from "./tape.ts";
import { createScriptedProvider } from "../providers/scripted.ts";
import { systemClock } from "../core/clock.ts";
import { createRedactor } from "../core/redact.ts";
import type { ResolvedJob } from "../config/job.ts";
import type { Cassette } from "./cassette.ts";
import type { ModelRequest } from "../providers/provider.ts";
import type { ToolOutcome } from "../tools/tool.ts";

const outcome = (content: string): Promise<ToolOutcome> => Promise.resolve({ status: "ok", content });

const JOB: ResolvedJob = { spec: { name: "t", prompt: "go" }, path: null, dir: "/tmp", inputs: {}, env: {} };
const ask = (content: string): ModelRequest => ({
  model: "m",
  messages: [{ role: "user", content }],
  tools: [],
});
const call = { tool: "list_dir", tool_call_id: "c1", args: { path: "." } };

async function record(): Promise<Cassette> {
  let text = "";
  const redact = createRedactor({ DEPLOY_TOKEN: "s3cr3t-value" });
  const tape = recordingTape((written) => Promise.resolve(void (text = written)), { job: JOB, redact });
  const provider = await tape.provider(() =>
    Promise.resolve(
      createScriptedProvider([{ content: "first" }, { content: "second" }], { clock: systemClock }),
    )
  );
  assert.equal((await provider.complete(ask("one s3cr3t-value"))).message.content, "first");
  await tape.executeTool(call, () => outcome("a.txt"));
  await provider.complete(ask("two"));
  await tape.close({ status: "success", terminal_reason: "completed" });
  assert.doesNotMatch(text, /s3cr3t-value/);
  return JSON.parse(text);
}

Deno.test("replay serves what was recorded, runs no tool, and never builds the job's provider", async () => {
  const cassette = await record();
  assert.deepEqual(cassette.exchanges.map((e) => e.type), ["model", "tool", "model"]);
  const redact = createRedactor({ DEPLOY_TOKEN: "s3cr3t-value" });
  const tape = replayTape(cassette, { tools: "recorded", redact });
  const provider = await tape.provider(() => Promise.reject(new Error("the job's provider was built")));
  assert.equal((await provider.complete(ask("one s3cr3t-value"))).message.content, "first");
  const served = await tape.executeTool(call, () => Promise.reject(new Error("a tool ran")));
  assert.deepEqual(served, { status: "ok", content: "a.txt" });
  assert.equal((await provider.complete(ask("two"))).message.content, "second");
  await assert.rejects(
    provider.complete(ask("three")),
    /model call 3: the cassette has only 2 model call\(s\)/,
  );
});

Deno.test("the first divergence stands: later calls fail with it too", async () => {
  const tape = replayTape(await record(), { tools: "recorded", redact: (t) => t });
  const provider = await tape.provider(() => Promise.reject(new Error("built")));
  const first = await provider.complete(ask("one [REDACTED:DEPLOY_TOKEN]")).then(() => null);
  assert.equal(first, null);
  const diverged = await tape.executeTool(
    { ...call, args: { path: "src" } },
    () => Promise.reject(new Error("ran")),
  )
    .then(() => null, (error) => error);
  assert.ok(diverged instanceof ReplayDiverged);
  assert.equal(diverged.reason, "replay_diverged");
  assert.match(
    diverged.message,
    /tool call 1 \(list_dir\) args: recorded \{"path":"\."\}, now \{"path":"src"\}/,
  );
  // A caller that swallowed it (a compaction summary) cannot carry on past it.
  await assert.rejects(provider.complete(ask("two")), (error) => error === diverged);
});

Deno.test("--tools live runs the tool and compares its result", async () => {
  const tape = replayTape(await record(), { tools: "live", redact: (t) => t });
  let ran = 0;
  const same = await tape.executeTool(
    call,
    () => outcome("a.txt").finally(() => ran++),
  );
  assert.deepEqual([same, ran], [{ status: "ok", content: "a.txt" }, 1]);
  const other = replayTape(await record(), { tools: "live", redact: (t) => t });
  await assert.rejects(
    other.executeTool(call, () => outcome("b.txt")),
    /tool call 1 \(list_dir\) result content: recorded "a\.txt", now "b\.txt"/,
  );
});
