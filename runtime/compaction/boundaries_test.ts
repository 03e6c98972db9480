import assert from "node:assert/strict";
import type { StoredMessage } from "../core/types.ts";
import { orphanProblems } from "./_testing.ts";
import { selectBoundaries } from "./boundaries.ts";

let nextId = 0;
function msg(role: StoredMessage["role"], extra: Partial<StoredMessage> = {}): StoredMessage {
  nextId++;
  return {
    id: nextId,
    session_id: "s",
    seq: nextId,
    pos: nextId,
    role,
    content: `${role} ${nextId}`,
    kind: "message",
    active: true,
    prompt_tokens: null,
    completion_tokens: null,
    created_at: 0,
    ...extra,
  };
}
function call(...ids: string[]): StoredMessage {
  return msg("assistant", { tool_calls: ids.map((id) => ({ id, name: "shell", arguments: "{}" })) });
}
function result(id: string): StoredMessage {
  return msg("tool", { tool_call_id: id, name: "shell" });
}

Deno.test("boundaries: the system prompt and protect_first head, protect_last tail", () => {
  const m = [
    msg("system"),
    msg("user"),
    msg("assistant"),
    msg("user"),
    msg("assistant"),
    msg("user"),
    msg("assistant"),
  ];
  assert.deepEqual(selectBoundaries(m, { protect_first: 2, protect_last: 2 }), { head: 3, tail: 5 });
  // Nothing left in the middle when the protected parts overlap.
  assert.deepEqual(selectBoundaries(m, { protect_first: 3, protect_last: 4 }), { head: 4, tail: 4 });
});

Deno.test("boundaries: the latest real user message is always in the tail, a summary does not count", () => {
  const m = [
    msg("system"),
    msg("user"),
    msg("assistant"),
    msg("user"),
    msg("user", { kind: "summary" }),
    msg("assistant"),
    msg("assistant"),
    msg("assistant"),
  ];
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 1 }), { head: 2, tail: 3 });
});

Deno.test("boundaries: the head grows to take in the results of a tool call it contains", () => {
  const m = [
    msg("system"),
    msg("user"),
    call("a", "b"),
    result("a"),
    result("b"),
    msg("assistant"),
    msg("user"),
    msg("assistant"),
  ];
  // protect_first 2 would cut between the call and its results.
  assert.deepEqual(selectBoundaries(m, { protect_first: 2, protect_last: 1 }), { head: 5, tail: 6 });
  // protect_first 3 would cut between two results of one call.
  assert.deepEqual(selectBoundaries(m, { protect_first: 3, protect_last: 1 }), { head: 5, tail: 6 });
});

Deno.test("boundaries: the tail moves back to the assistant message whose results it would start with", () => {
  const m = [
    msg("system"),
    msg("user"),
    msg("assistant"),
    msg("user"),
    call("a", "b"),
    result("a"),
    result("b"),
  ];
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 1 }), { head: 2, tail: 3 });
  const n = [
    msg("system"),
    msg("user"),
    msg("assistant"),
    msg("assistant"),
    call("c", "d"),
    result("c"),
    result("d"),
  ];
  assert.deepEqual(selectBoundaries(n, { protect_first: 1, protect_last: 2 }), { head: 2, tail: 4 });
});

Deno.test("boundaries: a late result (appended after other messages) keeps its whole span together", () => {
  // A repaired dangling call: its result was appended after the next user message.
  const m = [
    msg("system"),
    msg("user"),
    call("a"),
    msg("user"),
    result("a"),
    msg("assistant"),
    msg("user"),
    msg("assistant"),
  ];
  const { head, tail } = selectBoundaries(m, { protect_first: 2, protect_last: 3 });
  assert.ok(head === 2 || head >= 5, `head ${head} splits the span 2..4`);
  assert.ok(tail <= 2 || tail >= 5, `tail ${tail} splits the span 2..4`);
});

Deno.test("boundaries: random transcripts never split a tool call from its results", () => {
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let trial = 0; trial < 300; trial++) {
    const m: StoredMessage[] = [msg("system"), msg("user")];
    const length = 5 + Math.floor(random() * 40);
    while (m.length < length) {
      const r = random();
      if (r < 0.4) {
        const ids = Array.from(
          { length: 1 + Math.floor(random() * 3) },
          (_, i) => `t${trial}_${m.length}_${i}`,
        );
        m.push(call(...ids), ...ids.map(result));
      } else m.push(msg(r < 0.7 ? "assistant" : "user"));
    }
    const protect_first = Math.floor(random() * 6);
    const protect_last = 1 + Math.floor(random() * 10);
    const budget = random() < 0.5
      ? {}
      : { tailBudget: random() * 3000, tokens: (i: number) => 10 + (i * 37) % 300 };
    const { head, tail } = selectBoundaries(m, { protect_first, protect_last, ...budget });
    assert.ok(head <= tail && tail <= m.length);
    const summary = msg("user", { kind: "summary" });
    const compacted = head < tail ? [...m.slice(0, head), summary, ...m.slice(tail)] : m;
    assert.deepEqual(orphanProblems(compacted), [], `trial ${trial}: head ${head} tail ${tail}`);
    // Without a budget protect_last is the tail; with one it gives way, down to the newest message.
    const least = "tailBudget" in budget ? 1 : protect_last;
    assert.ok(m.length - tail >= Math.min(least, m.length - head), `trial ${trial}: tail too short`);
    assert.ok(head >= Math.min(m.length, 1 + protect_first), `trial ${trial}: head too short`);
  }
});

Deno.test("boundaries: the tail is a token budget first; protect_last is a preference that gives way", () => {
  const m = [
    msg("system"),
    msg("user"),
    ...Array.from({ length: 10 }, (_, i) => msg(i % 2 ? "user" : "assistant")),
  ];
  const tokens = () => 100;
  // 350 tokens would hold three messages; protect_last asks for two, and gets them.
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 2, tailBudget: 350, tokens }), {
    head: 2,
    tail: 10,
  });
  // protect_last 5 does not fit 150 tokens: the budget wins, down to the newest message.
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 5, tailBudget: 150, tokens }), {
    head: 2,
    tail: 11,
  });
  // Without a budget the floor alone decides (as for /compress).
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 2 }), { head: 2, tail: 10 });
});

Deno.test("boundaries: the budget walk stops short of a tool-call span it would split", () => {
  const m = [
    msg("system"),
    msg("user"),
    msg("assistant"),
    call("a", "b"),
    result("a"),
    result("b"),
    msg("assistant"),
  ];
  const tokens = (i: number) => (i === 3 ? 500 : 100);
  // 250 tokens reach into the results of the call: the tail starts after the span rather than split it.
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 1, tailBudget: 250, tokens }), {
    head: 2,
    tail: 6,
  });
  // 1000 tokens hold the whole span and the message before it, which protect_last 5 asks for.
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 5, tailBudget: 1000, tokens }), {
    head: 2,
    tail: 2,
  });
  // protect_last 1 with room to spare: the tail does not grow past it.
  assert.deepEqual(selectBoundaries(m, { protect_first: 1, protect_last: 1, tailBudget: 1000, tokens }), {
    head: 2,
    tail: 6,
  });
});

Deno.test("boundaries: the current tool round stays in the tail even when the budget holds none of it", () => {
  const m = [
    msg("system"),
    msg("user"),
    msg("assistant"),
    msg("user"),
    call("a", "b"),
    result("a"),
    result("b"),
  ];
  const tokens = (i: number) => (i >= 4 ? 5000 : 10);
  // A prompt in the head, then one long turn: the round just asked for is kept, not compacted.
  assert.deepEqual(selectBoundaries(m, { protect_first: 0, protect_last: 1, tailBudget: 100, tokens }), {
    head: 1,
    tail: 3,
  });
  const single = [msg("system"), msg("user"), call("c"), result("c"), call("d"), result("d")];
  assert.deepEqual(
    selectBoundaries(single, { protect_first: 1, protect_last: 1, tailBudget: 100, tokens: () => 5000 }),
    { head: 2, tail: 4 },
  );
});
