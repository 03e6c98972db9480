import assert from "node:assert/strict";
import { CUT_MARKER, fitToolResult } from "./cut.ts";

const result = (content: string) => ({
  role: "tool" as const,
  tool_call_id: "c1",
  name: "read_file",
  content,
});

Deno.test("cut: a tool result within max_tool_result is stored as it is", () => {
  const message = result("x".repeat(400));
  assert.deepEqual(fitToolResult(message, { maxTokens: 100, sessionId: "s1" }), [message]);
});

Deno.test("cut: a larger one is archived whole and stored as head + marker + tail within the limit", () => {
  const content = "HEAD" + "m".repeat(10_000) + "TAIL";
  const [full, cut] = fitToolResult(result(content), { maxTokens: 200, sessionId: "s1" });
  assert.deepEqual(full, { ...result(content), active: false });
  assert.equal(cut!.active, undefined, "the cut copy is the active row");
  assert.equal(cut!.tool_call_id, "c1");
  assert.ok(cut!.content.length <= 800, `${cut!.content.length} characters`);
  assert.ok(cut!.content.startsWith("HEAD") && cut!.content.endsWith("TAIL"));
  const omitted = Number(cut!.content.match(new RegExp(`(\\d+) ${CUT_MARKER}`))![1]);
  const kept = content.length - omitted;
  assert.equal(cut!.content.replace(/\n\n\[….*…\]\n\n/s, "").length, kept, "the marker counts what was cut");
  assert.match(cut!.content, /hermes sessions show s1 --all/);
});
