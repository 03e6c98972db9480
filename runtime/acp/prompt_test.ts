import assert from "node:assert/strict";
import type { RunResult } from "../session/outcome.ts";
import type { TurnOutcome } from "../session/turn.ts";
import { promptText, stopReasonOf } from "./prompt.ts";

function outcome(status: RunResult["status"], reason: string, extra: Partial<TurnOutcome> = {}): TurnOutcome {
  const result = { status, terminal_reason: reason } as RunResult;
  return { result, cancelled: false, ...extra };
}

Deno.test("stopReasonOf: maps turn outcomes to ACP stop reasons; failures have none", () => {
  assert.equal(stopReasonOf(outcome("success", "completed", { finish_reason: "stop" })), "end_turn");
  assert.equal(
    stopReasonOf(outcome("failed", "content_filtered", { finish_reason: "content_filter" })),
    "refusal",
  );
  assert.equal(
    stopReasonOf(outcome("failed", "output_truncated", { finish_reason: "length" })),
    "max_tokens",
  );
  assert.equal(stopReasonOf(outcome("failed", "empty_response")), "end_turn");
  assert.equal(stopReasonOf(outcome("interrupted", "cancelled", { cancelled: true })), "cancelled");
  assert.equal(stopReasonOf(outcome("limit", "max_turns", { limit: "max_turns" })), "max_turn_requests");
  assert.equal(stopReasonOf(outcome("limit", "max_tokens", { limit: "max_tokens" })), "max_tokens");
  assert.equal(stopReasonOf(outcome("limit", "timeout", { limit: "timeout" })), null);
  assert.equal(stopReasonOf(outcome("failed", "provider_error")), null);
});

Deno.test("promptText: text, resource links and embedded text; other content is refused", () => {
  assert.equal(
    promptText([
      { type: "text", text: "Read" },
      { type: "resource_link", name: "a.ts", uri: "file:///w/a.ts" },
      { type: "resource", resource: { uri: "file:///w/b.ts", text: "const b = 1;" } },
    ]),
    "Read\n[a.ts](file:///w/a.ts)\nconst b = 1;",
  );
  assert.throws(
    () => promptText([{ type: "image", data: "AAAA", mimeType: "image/png" }]),
    /text prompts only/,
  );
  assert.throws(() => promptText([{ type: "text", text: "  " }]), /empty/);
});
