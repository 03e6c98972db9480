/**
 * One atomic claim on PostgreSQL: 4 concurrent `hermes run --db URL --resume SID -p …` processes × 20 trials
 * (two sessions raced side by side, 10 trials each) against the test server (tests/_testing/claim_race.ts).
 * Without HERMES_TEST_POSTGRES_URL it is skipped with a visible reason, except under CI=true.
 */
import assert from "node:assert/strict";
import { scratchDatabase, URL_VARIABLE } from "../../runtime/store/postgres/_testing.ts";
import { raceResumes } from "../_testing/claim_race.ts";

const serverUrl = Deno.env.get(URL_VARIABLE);
const name =
  "claim race (postgres): 4 concurrent resumes × 20 trials, exactly one runs each, transcript well-formed";

if (serverUrl) {
  Deno.test(name, async () => {
    await using db = await scratchDatabase(serverUrl, "hermes_claim");
    const report = await raceResumes({ storeArgs: ["--db", db.url], lanes: 2, trialsPerLane: 10, racers: 4 });
    assert.deepEqual(report.runners, Array(20).fill(1));
    console.log(`claim race (postgres): ${report.trials}/${report.trials} trials with 1 runner of 4`);
  });
} else if (Deno.env.get("CI") === "true") {
  Deno.test(name, () => {
    assert.fail(`${URL_VARIABLE} is not set, so this PostgreSQL test did not run; .ci/run sets it`);
  });
} else {
  Deno.test({ name: `${name} (skipped: ${URL_VARIABLE} is not set)`, ignore: true, fn() {} });
}
