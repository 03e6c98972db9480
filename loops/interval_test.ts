import assert from "node:assert/strict";
import { compactInterval, requirePositive, spelledInterval } from "./interval.ts";

Deno.test("compactInterval reads compact tokens and rejects everything else", () => {
  const table: [string, number | null][] = [
    ["30s", 30_000],
    ["5m", 300_000],
    ["2h", 7_200_000],
    ["1h30m", 5_400_000],
    ["250ms", 250],
    ["1d", 86_400_000],
    ["5M", 300_000],
    ["0m", 0],
    ["5", null],
    ["5x", null],
    ["m", null],
    ["check", null],
    ["5m30", null],
  ];
  for (const [token, expected] of table) assert.equal(compactInterval(token), expected, token);
});

Deno.test("spelledInterval reads spelled units from the start of the words", () => {
  const table: [string, { ms: number; used: number } | null][] = [
    ["90 minutes check", { ms: 5_400_000, used: 2 }],
    ["2 hours", { ms: 7_200_000, used: 2 }],
    ["1d inbox", { ms: 86_400_000, used: 1 }],
    ["1 hour 30 minutes x", { ms: 5_400_000, used: 4 }],
    ["90min x", { ms: 5_400_000, used: 1 }],
    ["30 seconds x", { ms: 30_000, used: 2 }],
    ["1h30m x", { ms: 5_400_000, used: 1 }],
    ["5 things to do", null],
    ["check the inbox", null],
  ];
  for (const [text, expected] of table) assert.deepEqual(spelledInterval(text.split(" ")), expected, text);
});

Deno.test("requirePositive refuses a zero interval and passes a positive one", () => {
  assert.throws(() => requirePositive(0, "0m", "/loop"), {
    name: "ValidationError",
    message: 'Invalid /loop: interval "0m" must be greater than zero',
  });
  assert.equal(requirePositive(1000, "1s", "/loop"), 1000);
});
