import assert from "node:assert/strict";
import { runTool, type Tool, type ToolContext } from "./tool.ts";

function context(signal: AbortSignal): ToolContext {
  return { session_id: "s", job_dir: "/", env: {}, host_env: {}, signal };
}

const spec = { name: "t", description: "", parameters: {} };

Deno.test("runTool: a tool that ignores its signal is abandoned once the signal aborts", async () => {
  let release = () => {};
  const stuck: Tool = {
    spec,
    run: () => new Promise((resolve) => (release = () => resolve({ status: "ok", content: "late" }))),
  };
  const controller = new AbortController();
  const reason = new DOMException("received SIGTERM", "AbortError");
  const call = runTool(stuck, {}, context(controller.signal));
  controller.abort(reason);
  await assert.rejects(call, (error) => error === reason);
  release();
});

Deno.test("runTool: a tool that honours its signal returns its own outcome; an untouched call is unchanged", async () => {
  const polite: Tool = {
    spec,
    run: (_args, { signal }) =>
      new Promise((resolve) =>
        signal.addEventListener("abort", () => resolve({ status: "error", content: "cancelled (killed)" }))
      ),
  };
  const controller = new AbortController();
  const call = runTool(polite, {}, context(controller.signal));
  controller.abort();
  assert.deepEqual(await call, { status: "error", content: "cancelled (killed)" });
  const quick: Tool = { spec, run: () => Promise.resolve({ status: "ok", content: "done" }) };
  assert.deepEqual(await runTool(quick, {}, context(new AbortController().signal)), {
    status: "ok",
    content: "done",
  });
});
