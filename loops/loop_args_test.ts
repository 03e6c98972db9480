import assert from "node:assert/strict";
import { parseLoopArgs } from "./loop_args.ts";

Deno.test("parseLoopArgs: intervals, the optional `every`, and bare numbers as prompt text", () => {
  const table: [string, { interval_ms: number | null; prompt: string }][] = [
    ["5m check CI", { interval_ms: 300_000, prompt: "check CI" }],
    ["every 30s ping the server", { interval_ms: 30_000, prompt: "ping the server" }],
    ["1h30m summarise the logs", { interval_ms: 5_400_000, prompt: "summarise the logs" }],
    ["2h x", { interval_ms: 7_200_000, prompt: "x" }],
    ["check CI", { interval_ms: null, prompt: "check CI" }],
    ["5 things to check", { interval_ms: null, prompt: "5 things to check" }],
    ['10m "quoted prompt"', { interval_ms: 600_000, prompt: "quoted prompt" }],
    ["5m line one\n  line two", { interval_ms: 300_000, prompt: "line one\n  line two" }],
  ];
  for (const [args, expected] of table) {
    const parsed = parseLoopArgs(args);
    assert.equal(parsed.kind, "start", args);
    if (parsed.kind !== "start") continue;
    assert.equal(parsed.interval_ms, expected.interval_ms, args);
    assert.equal(parsed.prompt, expected.prompt, args);
  }
});

Deno.test("parseLoopArgs: --times and --until, in either order", () => {
  assert.deepEqual(parseLoopArgs("10m check CI --times 3"), {
    kind: "start",
    prompt: "check CI",
    interval_ms: 600_000,
    interval_text: "10m",
    times: 3,
    until: null,
  });
  const both = parseLoopArgs("check --until CI is green --times 2");
  assert.equal(both.kind === "start" && both.until, "CI is green");
  assert.equal(both.kind === "start" && both.times, 2);
  const quoted = parseLoopArgs('1s check --times=4 --until "tests pass"');
  assert.equal(quoted.kind === "start" && quoted.until, "tests pass");
  assert.equal(quoted.kind === "start" && quoted.times, 4);
  const inPrompt = parseLoopArgs("5m run deno test --parallel");
  assert.equal(inPrompt.kind === "start" && inPrompt.prompt, "run deno test --parallel");
});

Deno.test("parseLoopArgs: controls", () => {
  for (const action of ["status", "pause", "resume", "stop"]) {
    assert.deepEqual(parseLoopArgs(` ${action.toUpperCase()} `), { kind: "control", action });
  }
});

Deno.test("parseLoopArgs: bad input names what was expected", () => {
  const table: [string, RegExp][] = [
    ["0m check", /interval "0m" must be greater than zero/],
    ["", /expected \/loop \[every\]/],
    ["5m", /missing PROMPT/],
    ["every 5m", /missing PROMPT/],
    ["every day check", /expected an interval like 30s, 5m or 1h30m after "every", got "day"/],
    ["x --times 0", /--times "0": expected a whole number/],
    ["x --times abc", /--times "abc"/],
    ["x --times 3 --times 4", /--times given twice/],
    ["x --until", /--until: expected a condition/],
  ];
  for (const [args, message] of table) {
    assert.throws(() => parseLoopArgs(args), { name: "ValidationError", message }, args);
  }
});
