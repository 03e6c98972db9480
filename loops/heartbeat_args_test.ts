import assert from "node:assert/strict";
import { parseHeartbeatArgs } from "./heartbeat_args.ts";

Deno.test("parseHeartbeatArgs: compact and spelled intervals", () => {
  const table: [string, number, string][] = [
    ["every 30m check the inbox", 1_800_000, "check the inbox"],
    ["every 90 minutes check", 5_400_000, "check"],
    ["2 hours look around", 7_200_000, "look around"],
    ["every 1d tidy up", 86_400_000, "tidy up"],
    ["every 1 hour 30 minutes x", 5_400_000, "x"],
    ['every 1s "quoted"', 1000, "quoted"],
  ];
  for (const [args, ms, prompt] of table) {
    const parsed = parseHeartbeatArgs(args);
    assert.equal(parsed.kind, "set", args);
    if (parsed.kind !== "set") continue;
    assert.equal(parsed.interval_ms, ms, args);
    assert.equal(parsed.prompt, prompt, args);
  }
});

Deno.test("parseHeartbeatArgs: controls", () => {
  for (const action of ["status", "pause", "resume", "clear"]) {
    assert.deepEqual(parseHeartbeatArgs(action), { kind: "control", action });
  }
});

Deno.test("parseHeartbeatArgs: bad input names what was expected", () => {
  const table: [string, RegExp][] = [
    ["every often check", /"often" is not an interval/],
    ["check the inbox", /"check" is not an interval/],
    ["every 0m check", /must be greater than zero/],
    ["every 5m", /missing PROMPT/],
    ["", /expected \/heartbeat every INTERVAL PROMPT/],
  ];
  for (const [args, message] of table) {
    assert.throws(() => parseHeartbeatArgs(args), { name: "ValidationError", message }, args);
  }
});
