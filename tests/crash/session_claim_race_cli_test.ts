/**
 * One atomic claim on SQLite: 4 concurrent `hermes run --resume SID -p …` processes × 20 trials (two
 * sessions raced side by side, 10 trials each), real CLI processes on one store file (tests/_testing/claim_race.ts).
 */
import assert from "node:assert/strict";
import { raceResumes } from "../_testing/claim_race.ts";

Deno.test("claim race (sqlite): 4 concurrent resumes × 20 trials, exactly one runs each, transcript well-formed", async () => {
  const report = await raceResumes({ storeArgs: [], lanes: 2, trialsPerLane: 10, racers: 4 });
  assert.deepEqual(report.runners, Array(20).fill(1));
  console.log(`claim race (sqlite): ${report.trials}/${report.trials} trials with 1 runner of 4`);
});
