/**
 * Per-turn cost with the store on PostgreSQL over a Unix socket against the store on SQLite, on the real path of bench/turn_bench.ts: `hermes run` (openSession with its compactor on, the openai
 * provider over HTTP to the OpenAI-compatible test server) doing one `read_file` tool round after another,
 * each committing its messages to the store. Timing is taken at the server, so it covers everything the
 * process does between two requests.
 *
 * - time per tool round, and the turn overhead: that minus the raw HTTP round trip of the same request (a
 *   bare fetch from a process of its own, bench/_raw_client.ts); target ≤ 2 ms on SQLite.
 * - per-turn gap: from the reply to a tool call to the next model request (the store commits sit in it).
 * - PostgreSQL − SQLite per round, and the ratio of the overheads.
 *
 * Each run is a fresh session (`hermes run JOB --db …`); its first rounds are left out. Cases run once per
 * round, interleaved: SQLite, PostgreSQL, raw. PostgreSQL is the server named by --url or
 * HERMES_TEST_POSTGRES_URL, in a scratch database dropped at the end; without one the bench says so.
 *
 *   deno run -A bench/postgres_turn_bench.ts [--url postgres://…] [--rounds N]
 */
import { parseArgs } from "node:util";
import { scratchDatabase } from "../runtime/store/postgres/_testing.ts";
import { interleave, ratio, report, spread } from "./_stats.ts";
import { benchPostgresUrl } from "./_postgres_url.ts";
import { roundSamples, SKIP, TOOL_ROUNDS, toolRounds } from "./_tool_rounds.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { url: { type: "string" }, rounds: { type: "string", default: "8" } },
});
const serverUrl = benchPostgresUrl(values.url, "postgres turn bench");
const rounds = Number(values.rounds);
await using bench = await toolRounds("hermes-pg-turn-bench-");

await using database = await scratchDatabase(serverUrl, "hermes_turn_bench");
const stores = { sqlite: `${bench.dir}/state.db`, postgres: database.url };
const samples = roundSamples(["sqlite", "postgres", "raw"] as const);
const { perRound, gaps } = samples;
const body = `${bench.dir}/body.json`;
const run = (name: keyof typeof stores) => async () => {
  samples.record(name, await bench.timedRun(["run", bench.job, "--db", stores[name], "--quiet"]));
  // The raw baseline posts a request of the same size as the middle of a run.
  await bench.saveMiddleRequest(body);
  return 0;
};
await interleave({
  sqlite: run("sqlite"),
  postgres: run("postgres"),
  raw: async () => {
    samples.record("raw", await bench.timedRaw(body));
    return 0;
  },
}, { rounds, warmup: 1 });
samples.dropWarmup();

console.log(`(median of tool rounds ${SKIP + 1}–${TOOL_ROUNDS} per process; ${rounds} processes per case)`);
report("raw HTTP round trip (bare fetch, same request)", spread(perRound.raw));
report("time per tool round, SQLite store", spread(perRound.sqlite));
report("time per tool round, PostgreSQL store (Unix socket)", spread(perRound.postgres));
const overhead = (name: keyof typeof stores) => perRound[name].map((ms, i) => ms - perRound.raw[i]!);
report("turn overhead, SQLite", spread(overhead("sqlite")), "≤ 2 ms median");
report("turn overhead, PostgreSQL", spread(overhead("postgres")));
report("per-turn gap, SQLite", spread(gaps.sqlite));
report("per-turn gap, PostgreSQL", spread(gaps.postgres));
report(
  "PostgreSQL − SQLite, per tool round",
  spread(perRound.postgres.map((ms, i) => ms - perRound.sqlite[i]!)),
);
report("turn overhead, PostgreSQL / SQLite", ratio(overhead("postgres"), overhead("sqlite")));
