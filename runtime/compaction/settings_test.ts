import assert from "node:assert/strict";
import { autoThreshold, scaledTo, settingsFrom } from "./settings.ts";

const base = { model: "m", config: {} };

Deno.test("settings: the default threshold keeps the reply's room free, between 0.75 and 0.9 of the window", () => {
  // Up to 32k the reply's 8192 tokens take a quarter or more: the floor of 0.75 holds, as before.
  for (const window of [4_000, 8_000, 16_000, 32_000]) {
    assert.equal(settingsFrom({ ...base, context_window: window }).thresholdShare, 0.75, `${window}`);
  }
  assert.equal(settingsFrom({ ...base, context_window: 64_000 }).limit, 64_000 - 8192);
  // A large window is used up to 90 %: a quarter of 128k would be four times any reply.
  const large = settingsFrom({ ...base, context_window: 128_000 });
  assert.equal(large.thresholdShare, 0.9);
  assert.equal(large.limit, 115_200);
  // model.max_output_tokens is the reserve when it is set.
  const wide = settingsFrom({ ...base, context_window: 64_000, max_output_tokens: 16_000 });
  assert.equal(wide.limit, 48_000);
  assert.equal(autoThreshold(1_000_000, 8192), 0.9);
});

Deno.test("settings: compaction.threshold wins over the automatic one, at every window", () => {
  for (const window of [8_000, 128_000]) {
    const settings = settingsFrom({ ...base, config: { threshold: 0.6 }, context_window: window });
    assert.equal(settings.thresholdShare, 0.6);
    assert.equal(settings.replyReserve, null);
    assert.equal(scaledTo(settings, window / 2).limit, Math.floor(0.6 * (window / 2)));
  }
});

Deno.test("settings: a smaller real window recomputes the automatic threshold for that window", () => {
  const settings = settingsFrom({ ...base, context_window: 128_000 });
  // The server runs 16k: 0.9 of it would leave 1.6k for the reply, so the floor of 0.75 applies there.
  const scaled = scaledTo(settings, 16_000);
  assert.equal(scaled.limit, 12_000);
  assert.equal(scaled.lowWater, 8_000);
});
