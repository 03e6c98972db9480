import assert from "node:assert/strict";
import { ManualClock } from "./_testing.ts";
import { EventBus, type EventInput, type EventType, type HermesEvent } from "./events.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const assertType = <T extends true>(_proof?: T) => {};

Deno.test("emit stamps schema_version, session_id, seq (per session, from 1) and ts from the clock; type comes first", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 2, 3, 4, 5));
  const bus = new EventBus(clock);
  const seen: HermesEvent[] = [];
  bus.subscribe((event) => seen.push(event));

  const first = bus.emit("a", { type: "turn.start", turn: 1 });
  await clock.advance(1_500);
  bus.emit("b", { type: "tool.denied", tool: "shell", tool_call_id: "c1", reason: "blocked" });
  const third = bus.emit("a", {
    type: "turn.end",
    turn: 1,
    usage: null,
    cost_usd: null,
    finish_reason: "stop",
  });

  assert.deepEqual(seen, [
    {
      type: "turn.start",
      schema_version: 1,
      session_id: "a",
      seq: 1,
      ts: "2026-01-02T03:04:05.000Z",
      turn: 1,
    },
    {
      type: "tool.denied",
      schema_version: 1,
      session_id: "b",
      seq: 1,
      ts: "2026-01-02T03:04:06.500Z",
      tool: "shell",
      tool_call_id: "c1",
      reason: "blocked",
    },
    {
      type: "turn.end",
      schema_version: 1,
      session_id: "a",
      seq: 2,
      ts: "2026-01-02T03:04:06.500Z",
      turn: 1,
      usage: null,
      cost_usd: null,
      finish_reason: "stop",
    },
  ]);
  assert.equal(seen[0], first, "listeners get the returned event");
  assert.equal(seen[2], third);
  assert.deepEqual(Object.keys(third).slice(0, 5), ["type", "schema_version", "session_id", "seq", "ts"]);
});

Deno.test("subscribe returns an unsubscribe; seq keeps counting without listeners", () => {
  const bus = new EventBus(new ManualClock());
  const seen: number[] = [];
  const unsubscribe = bus.subscribe((event) => seen.push(event.seq));
  bus.emit("s", { type: "session.start", job: "j", model: "m", provider: "scripted", resumed: false });
  unsubscribe();
  bus.emit("s", { type: "session.end", status: "success", reason: "completed" });
  bus.subscribe((event) => seen.push(event.seq));
  bus.emit("s", { type: "session.end", status: "success", reason: "completed" });
  assert.deepEqual(seen, [1, 3]);
});

Deno.test("an emit site cannot misspell a type, omit or add a field, or set the envelope (deno check)", () => {
  const bus = new EventBus(new ManualClock());
  const call = { tool: "shell", tool_call_id: "c1", args: {} };
  bus.emit("s", { type: "tool.call", ...call });
  // @ts-expect-error: no event is called "tool.cal"
  bus.emit("s", { type: "tool.cal", ...call });
  // @ts-expect-error: tool.call requires tool_call_id
  bus.emit("s", { type: "tool.call", tool: "shell", args: {} });
  // @ts-expect-error: loop.end has `ticks`, not `tick`
  bus.emit("s", { type: "loop.end", reason: "times", status: "done", tick: 3 });
  // @ts-expect-error: the bus sets seq
  bus.emit("s", { type: "tool.call", ...call, seq: 7 });
  // @ts-expect-error: a user message names its source
  bus.emit("s", { type: "message", role: "user", content: "hi" });
  // @ts-expect-error: only assistant messages carry tool calls
  bus.emit("s", { type: "message", role: "user", content: "hi", source: "cli", tool_calls: [] });
  bus.emit("s", { type: "message", role: "assistant", content: "", tool_calls: [] });
});

Deno.test("listeners narrow on type", () => {
  const bus = new EventBus(new ManualClock());
  const ids: string[] = [];
  bus.subscribe((event) => {
    // @ts-expect-error: not every event has a tool_call_id
    void event.tool_call_id;
    if (event.type === "tool.call" || event.type === "tool.result") ids.push(event.tool_call_id);
    if (event.type === "message" && event.role === "user") ids.push(event.source);
  });
  bus.emit("s", { type: "tool.call", tool: "shell", tool_call_id: "c1", args: {} });
  bus.emit("s", { type: "message", role: "user", content: "hi", source: "rpc" });
  assert.deepEqual(ids, ["c1", "rpc"]);
});

// The vocabulary of docs/events.md (plus `compaction.failed`, `interval.raised`, MCP's `tool.progress` and `mcp.error`, `store.retry`, the approvals'): renaming or removing an event
// changes this line.
assertType<
  Equal<
    EventType,
    | "session.start"
    | "turn.start"
    | "message"
    | "tool.call"
    | "tool.result"
    | "tool.denied"
    | "approval.requested"
    | "approval.resolved"
    | "tool.progress"
    | "mcp.error"
    | "compaction"
    | "compaction.start"
    | "compaction.blocked"
    | "compaction.failed"
    | "command"
    | "interval.raised"
    | "sandbox"
    | "loop.tick"
    | "loop.end"
    | "heartbeat.tick"
    | "plugin.error"
    | "provider.retry"
    | "store.retry"
    | "turn.end"
    | "session.end"
    | "agent.start"
    | "agent.end"
    | "result"
  >
>();
assertType<
  Equal<
    EventInput<"tool.denied">,
    { type: "tool.denied"; tool: string; tool_call_id: string; reason: string; server?: string }
  >
>();
