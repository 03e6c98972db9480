/**
 * The store on PostgreSQL against the store on SQLite (docs/store.md), interleaved A B A B in one run: appends/s
 * (one message per call, as an agent turn stores them) and schedule slot claims/s (one claim per call, and
 * batches of 50 as a daemon claims a busy minute; each run finished, untimed, right after). PostgreSQL commits
 * with its default `synchronous_commit = on` (a WAL flush per commit), SQLite with `synchronous = NORMAL`
 * (none in WAL mode): the ratio includes that difference in durability. PostgreSQL is the server named by --url or
 * HERMES_TEST_POSTGRES_URL (`.ci/run` shows how to start a throwaway one), in a fresh schema dropped at the end;
 * without one the bench says so and exits.
 *
 *   deno run -A bench/store_bench.ts [--url postgres://…] [--rounds N]
 */
import { parseArgs } from "node:util";
import postgres from "postgres";
import { currentProcess } from "../runtime/core/process_identity.ts";
import { clientOptions, parsePostgresUrl } from "../runtime/store/postgres/_url.ts";
import { openPostgresStore } from "../runtime/store/postgres/postgres_store.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import type { Store } from "../runtime/store/store.ts";
import { interleave, ratio, report, spread } from "./_stats.ts";
import { benchPostgresUrl } from "./_postgres_url.ts";

const BLOCK = 300;
const BATCH = 50;
const { values } = parseArgs({
  args: Deno.args,
  options: { url: { type: "string" }, rounds: { type: "string", default: "8" } },
});
const url = benchPostgresUrl(values.url, "store bench");

const schema = `hermes_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const dir = await Deno.makeTempDir({ prefix: "hermes-store-bench-" });
const sqlite = openSqliteStore(`${dir}/state.db`);
const pg = await openPostgresStore(url, { schema });
try {
  const holder = currentProcess();
  const counters = new Map<Store, number>();
  const nextSlot = (store: Store) => {
    const n = (counters.get(store) ?? 0) + 1;
    counters.set(store, n);
    return n;
  };
  const appends = async (store: Store) => {
    const { id } = await store.createSession({ job: "bench" });
    return async () => {
      const started = performance.now();
      for (let i = 0; i < BLOCK; i++) {
        await store.appendMessages(id, [{ role: i % 2 ? "assistant" : "user", content: `message ${i}` }]);
      }
      return BLOCK / ((performance.now() - started) / 1000);
    };
  };
  // A new job per claim (a job's next slot while its run is live would be an overrun), finished untimed
  // right after, as a daemon's runs are, so that live claims stay few.
  const claims = (store: Store, batch: number) => async () => {
    let elapsed = 0;
    for (let i = 0; i < BLOCK / batch; i++) {
      const now = Date.now();
      const slots = Array.from({ length: batch }, () => ({ job: `job-${nextSlot(store)}`, slot: now }));
      const started = performance.now();
      const outcomes = await store.claimSlots(slots, holder, { now, lease_ms: 60_000 });
      elapsed += performance.now() - started;
      if (outcomes.some((o) => o.outcome !== "claimed")) {
        throw new Error("Cannot bench claims: a slot was taken");
      }
      await store.finishRuns(
        slots.map((claim) => ({ claim, holder, outcome: { status: "success", session_id: null, now } })),
      );
    }
    return BLOCK / (elapsed / 1000);
  };
  const rates = await interleave({
    sqliteAppend: await appends(sqlite),
    pgAppend: await appends(pg),
    sqliteClaim: claims(sqlite, 1),
    pgClaim: claims(pg, 1),
    sqliteBatch: claims(sqlite, BATCH),
    pgBatch: claims(pg, BATCH),
  }, { rounds: Number(values.rounds), warmup: 1 });
  const perSecond = (rate: number) => `${rate.toFixed(0)}/s`;
  console.log(`PostgreSQL at ${pg.url} (schema ${schema}); SQLite in ${dir}; blocks of ${BLOCK}`);
  report("appendMessages, 1 message per call: SQLite", spread(rates.sqliteAppend, perSecond));
  report("appendMessages, 1 message per call: PostgreSQL", spread(rates.pgAppend, perSecond));
  report("  PostgreSQL / SQLite", ratio(rates.pgAppend, rates.sqliteAppend));
  report("claimSlots, 1 claim per call: SQLite", spread(rates.sqliteClaim, perSecond));
  report("claimSlots, 1 claim per call: PostgreSQL", spread(rates.pgClaim, perSecond));
  report("  PostgreSQL / SQLite", ratio(rates.pgClaim, rates.sqliteClaim));
  report(`claimSlots, ${BATCH} claims per call: SQLite`, spread(rates.sqliteBatch, perSecond));
  report(`claimSlots, ${BATCH} claims per call: PostgreSQL`, spread(rates.pgBatch, perSecond));
  report("  PostgreSQL / SQLite", ratio(rates.pgBatch, rates.sqliteBatch));
} finally {
  await sqlite.close();
  await pg.close();
  await Deno.remove(dir, { recursive: true });
  const admin = postgres({
    ...clientOptions(parsePostgresUrl(url)),
    max: 1,
    onnotice: () => {},
    fetch_types: false,
  });
  await admin`DROP SCHEMA IF EXISTS ${admin(schema)} CASCADE`;
  await admin.end();
}
