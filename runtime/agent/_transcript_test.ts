import assert from "node:assert/strict";
import type { Message } from "../core/types.ts";
import { pairToolResults } from "./_transcript.ts";

const call = (id: string): Message => ({
  role: "assistant",
  content: "",
  tool_calls: [{ id, name: "shell", arguments: "{}" }],
});
const result = (id: string): Message => ({
  role: "tool",
  content: `out ${id}`,
  tool_call_id: id,
  name: "shell",
});
const user = (content: string): Message => ({ role: "user", content });

Deno.test("pairToolResults: an interleaved transcript gets each result right behind its call", () => {
  const interleaved = [user("a"), user("b"), call("c5"), call("c6"), result("c5"), result("c6")];
  assert.deepEqual(pairToolResults(interleaved), [
    user("a"),
    user("b"),
    call("c5"),
    result("c5"),
    call("c6"),
    result("c6"),
  ]);
});

Deno.test("pairToolResults: a transcript in order is returned as it is", () => {
  const round: Message = {
    ...call("c1"),
    tool_calls: [...call("c1").tool_calls!, ...call("c2").tool_calls!],
  };
  const ordered = [
    user("a"),
    round,
    result("c2"),
    result("c1"),
    { role: "assistant", content: "done" } as Message,
  ];
  assert.equal(pairToolResults(ordered), ordered);
});
