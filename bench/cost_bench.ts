/**
 * `hermes cost` on a year of runs: 100 000 sessions with 3 model calls each (300 000 model-call rows, 40
 * repositories as labels, 12 jobs, 3 models), on SQLite and on PostgreSQL. Measured as a CLI process
 * (`hermes cost --by day`, Deno's start-up included) interleaved with a bare `deno run` hello-world, and in
 * process (`store.costReport`, the query alone).
 *
 *   deno run -A bench/cost_bench.ts [--url postgres://…] [--rounds N] [--sqlite-only] [--keep DIR]
 *
 * The fixture is written in bulk (one transaction per 10 000 runs, 1 000 on PostgreSQL) into a store opened, and so migrated, by
 * Hermes: what is measured is the report, not 400 000 single-call transactions. With `--keep DIR` the SQLite
 * store is kept in DIR and reused by later runs.
 */
import { parseArgs } from "node:util";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { sqliteHandle } from "../runtime/store/sqlite/_testing.ts";
import { openPostgresStore } from "../runtime/store/postgres/postgres_store.ts";
import { admin, scratchDatabase } from "../runtime/store/postgres/_testing.ts";
import type { CostDimension, Store } from "../runtime/store/store.ts";
import { interleave, ratio, report, spread, timeProcess, writeHelloWorld } from "./_stats.ts";

const RUNS = 100_000;
const CALLS_PER_RUN = 3;
const YEAR_MS = 365 * 86_400_000;
const BATCH = 10_000;
/** Runs per PostgreSQL insert: its model calls' 13 columns stay under the protocol's 65 535 parameters. */
const PG_BATCH = 1_000;
const MAIN = new URL("../main.ts", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    url: { type: "string" },
    rounds: { type: "string" },
    "sqlite-only": { type: "boolean" },
    keep: { type: "string" },
  },
});
const rounds = Number(values.rounds ?? 10);
const now = Date.now();

interface Row {
  session: { id: string; job: string; labels: string; at: number };
  calls: {
    at: number;
    model: string;
    input: number;
    cached: number;
    output: number;
    reasoning: number;
    usd: number;
  }[];
}

/** Run i of the fixture: spread evenly over the last year, deterministic. */
function run(i: number): Row {
  const at = now - YEAR_MS + Math.floor((i * YEAR_MS) / RUNS);
  const labels = JSON.stringify({
    "ci.repository": `octo/repo-${i % 40}`,
    "ci.run_id": String(1_000_000 + i),
    team: ["infra", "web", "data"][i % 3],
  });
  const calls = Array.from({ length: CALLS_PER_RUN }, (_, c) => {
    const input = 1000 + ((i * 7 + c * 13) % 5000);
    const output = 100 + ((i * 3 + c) % 900);
    return {
      at: at + c * 2000,
      model: ["gpt-4.1-mini", "gpt-4.1", "claude-sonnet-4"][(i + c) % 3]!,
      input,
      cached: Math.floor(input / 3),
      output,
      reasoning: c === 1 ? Math.floor(output / 2) : 0,
      usd: (input * 0.4 + output * 1.6) / 1e6,
    };
  });
  return { session: { id: `bench-${String(i).padStart(6, "0")}`, job: `job-${i % 12}`, labels, at }, calls };
}

async function fillSqlite(path: string): Promise<void> {
  const store = openSqliteStore(path);
  const { db } = sqliteHandle(store);
  const session = db.prepare(
    `INSERT INTO sessions (id, job, status, created_at, updated_at, ended_at, labels) VALUES (?, ?, 'success', ?, ?, ?, ?)`,
  );
  const call = db.prepare(
    `INSERT INTO model_calls (session_id, caller_id, job, labels, at, provider, model, prompt_tokens, cached_tokens,
       cache_write_tokens, completion_tokens, reasoning_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, 'openai', ?, ?, ?, 0, ?, ?, ?)`,
  );
  for (let start = 0; start < RUNS; start += BATCH) {
    db.exec("BEGIN IMMEDIATE");
    for (let i = start; i < Math.min(RUNS, start + BATCH); i++) {
      const { session: s, calls } = run(i);
      session.run(s.id, s.job, s.at, s.at, s.at + 6000, s.labels);
      for (const c of calls) {
        call.run(s.id, s.id, s.job, s.labels, c.at, c.model, c.input, c.cached, c.output, c.reasoning, c.usd);
      }
    }
    db.exec("COMMIT");
  }
  await store.close();
}

async function fillPostgres(url: string): Promise<void> {
  // Opening the store creates its schema (the migrations); the rows go in through the admin connection.
  await (await openPostgresStore(url)).close();
  await admin(url, async (sql) => {
    for (let start = 0; start < RUNS; start += PG_BATCH) {
      const rows = Array.from({ length: Math.min(PG_BATCH, RUNS - start) }, (_, k) => run(start + k));
      await sql.begin(async (tx) => {
        await tx`INSERT INTO sessions ${
          tx(rows.map(({ session: s }) => ({
            id: s.id,
            job: s.job,
            status: "success",
            created_at: s.at,
            updated_at: s.at,
            ended_at: s.at + 6000,
            labels: s.labels,
          })))
        }`;
        await tx`INSERT INTO model_calls ${
          tx(rows.flatMap(({ session: s, calls }) =>
            calls.map((c) => ({
              session_id: s.id,
              caller_id: s.id,
              job: s.job,
              labels: s.labels,
              at: c.at,
              provider: "openai",
              model: c.model,
              prompt_tokens: c.input,
              cached_tokens: c.cached,
              cache_write_tokens: 0,
              completion_tokens: c.output,
              reasoning_tokens: c.reasoning,
              cost_usd: c.usd,
            }))
          ))
        }`;
      });
    }
    await sql`ANALYZE`;
  });
}

async function measure(backend: string, db: string, openStore: () => Promise<Store>): Promise<void> {
  console.log(`\n${backend}: ${RUNS} runs × ${CALLS_PER_RUN} model calls over a year`);
  const helloDir = await Deno.makeTempDir({ prefix: "hermes-hello-" });
  const hello = await writeHelloWorld(helloDir);
  const home = await Deno.makeTempDir({ prefix: "hermes-cost-home-" });
  const cli = (...args: string[]) => () =>
    timeProcess(["run", "-A", MAIN, "--home", home, "--db", db, "cost", ...args]);
  const commands: Record<string, () => Promise<number>> = {
    "hermes cost --by day (365 groups)": cli("--by", "day", "--json"),
    "hermes cost --by label:ci.repository (40 groups)": cli("--by", "label:ci.repository", "--json"),
    "hermes cost --since 30d --by job --by model": cli(
      "--since",
      "30d",
      "--by",
      "job",
      "--by",
      "model",
      "--json",
    ),
  };
  const samples = await interleave<string>({
    hello: () => timeProcess(["run", hello], { cwd: helloDir }),
    ...commands,
  }, { rounds, warmup: 1 });
  report("bare `deno run` hello world (baseline)", spread(samples.hello!));
  for (const label of Object.keys(commands)) {
    report(label, spread(samples[label]!));
    report("  ratio to hello world", ratio(samples[label]!, samples.hello!));
  }

  const store = await openStore();
  const query = (by: CostDimension[], since?: number) => async () => {
    const started = performance.now();
    const groups = await store.costReport({ by, ...(since ? { since } : {}) });
    if (groups.length === 0) throw new Error("the report is empty");
    return performance.now() - started;
  };
  const inProcess = await interleave<string>({
    "costReport total (no grouping)": query([]),
    "costReport by day": query(["day"]),
    "costReport by label:ci.repository": query(["label:ci.repository"]),
    "costReport since 30d by job, model": query(["job", "model"], now - 30 * 86_400_000),
  }, { rounds, warmup: 1 });
  await store.close();
  console.log("in process (the store's query and row mapping, no start-up):");
  for (const [label, ms] of Object.entries(inProcess)) report(`  ${label}`, spread(ms));
  await Deno.remove(helloDir, { recursive: true });
  await Deno.remove(home, { recursive: true });
}

const dir = values.keep ?? await Deno.makeTempDir({ prefix: "hermes-cost-bench-" });
await Deno.mkdir(dir, { recursive: true });
try {
  const path = `${dir}/state.db`;
  let started = performance.now();
  if (!await Deno.stat(path).then(() => true, () => false)) {
    await fillSqlite(path);
    console.log(`sqlite fixture written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  await measure("SQLite", path, () => Promise.resolve(openSqliteStore(path)));
  if (!values["sqlite-only"]) {
    const serverUrl = values.url ?? Deno.env.get("HERMES_TEST_POSTGRES_URL");
    if (!serverUrl) {
      console.log("\nPostgreSQL skipped: pass --url postgres://… or set HERMES_TEST_POSTGRES_URL");
    } else {
      await using database = await scratchDatabase(serverUrl, "hermes_cost_bench");
      started = performance.now();
      await fillPostgres(database.url);
      console.log(`\npostgres fixture written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      await measure("PostgreSQL", database.url, () => openPostgresStore(database.url));
    }
  }
} finally {
  if (values.keep === undefined) await Deno.remove(dir, { recursive: true });
}
