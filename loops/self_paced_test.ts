import assert from "node:assert/strict";
import { nextSelfPacedDelay, normalizeReply, replyDigest } from "./self_paced.ts";

Deno.test("replyDigest ignores times, dates and durations but not content", async () => {
  const same: [string, string][] = [
    ["Checked at 10:42:07, CI still red.", "Checked at 11:03:55, CI still red."],
    ["As of 2026-01-05T10:00:00Z nothing new.", "As of 2026-01-06T09:12:44.120+01:00 nothing new."],
    ["Build took 3m12s; queue empty.", "Build took 45s; queue empty."],
    ["Last deploy 5 minutes ago.", "Last deploy 2 hours ago."],
    ["Report for Jan 5, 2026: ok", "Report for February 11, 2026: ok"],
    ["Monday 9:05 pm: idle", "Tuesday 10:15 am: idle"],
    ["on 05/01/2026 all quiet", "on 06/01/2026 all   QUIET"],
  ];
  for (const [a, b] of same) assert.equal(await replyDigest(a), await replyDigest(b), `${a} | ${b}`);
  assert.notEqual(await replyDigest("CI is red: 3 failures"), await replyDigest("CI is red: 4 failures"));
  assert.notEqual(await replyDigest("CI is red"), await replyDigest("CI is green"));
  assert.equal(normalizeReply("At 10:42 it took 3m.  Done"), "at it took . done");
});

Deno.test("self-paced sequence: floor, doubling while unchanged, ceiling, snap back on change", async () => {
  const pacing = { floor_ms: 60_000, ceiling_ms: 900_000 };
  const replies = ["same", "same", "same", "same", "same", "same", "changed", "changed"];
  const delays: number[] = [];
  let state = { digest: null as string | null, delay_ms: pacing.floor_ms };
  for (const reply of replies) {
    const digest = await replyDigest(reply);
    const delay = nextSelfPacedDelay(state, digest, pacing);
    delays.push(delay / 1000);
    state = { digest, delay_ms: delay };
  }
  assert.deepEqual(delays, [60, 120, 240, 480, 900, 900, 60, 120]);
});
