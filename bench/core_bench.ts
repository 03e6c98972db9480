/**
 * Store append throughput against raw node:sqlite inserts in the same mode (target: ≥ 50 %), interleaved:
 * blocks of raw inserts and store appends alternate, and each block's rate is compared with its neighbour's.
 * Turn overhead is measured on the real path in bench/turn_bench.ts, start-up in bench/startup_bench.ts.
 *
 *   deno run -A bench/core_bench.ts [--rounds N]
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { interleave, ratio, report, spread } from "./_stats.ts";

const BLOCK = 500;
const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "12" } } });
const dir = await Deno.makeTempDir({ prefix: "hermes-bench-" });
try {
  // Both sides write one row per BEGIN IMMEDIATE transaction into a store-created file (WAL,
  // synchronous=NORMAL, the same table and indexes). The raw side knows the next seq; the store looks it up,
  // as it must with other writers.
  const rawStore = openSqliteStore(`${dir}/raw.db`);
  const rawSession = await rawStore.createSession({ job: "bench" });
  await rawStore.close();
  const raw = new DatabaseSync(`${dir}/raw.db`);
  raw.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  const insert = raw.prepare(
    `INSERT INTO messages (session_id, seq, pos, role, content, kind, created_at)
     VALUES (?, ?, ?, 'user', ?, 'message', ?)`,
  );
  let seq = 0;
  const store = openSqliteStore(`${dir}/append.db`);
  const session = await store.createSession({ job: "bench" });
  const rates = await interleave({
    raw: () => {
      const started = performance.now();
      for (let i = 0; i < BLOCK; i++) {
        seq++;
        raw.exec("BEGIN IMMEDIATE");
        insert.run(rawSession.id, seq, seq, "hello world message", Date.now());
        raw.exec("COMMIT");
      }
      return Promise.resolve(BLOCK / ((performance.now() - started) / 1000));
    },
    store: async () => {
      const started = performance.now();
      for (let i = 0; i < BLOCK; i++) {
        await store.appendMessages(session.id, [{ role: "user", content: "hello world message" }]);
      }
      return BLOCK / ((performance.now() - started) / 1000);
    },
  }, { rounds: Number(values.rounds), warmup: 1 });
  raw.close();
  await store.close();
  const perSecond = (rate: number) => `${rate.toFixed(0)}/s`;
  report(`raw node:sqlite insert (1 row/tx, blocks of ${BLOCK})`, spread(rates.raw, perSecond));
  report("store.appendMessages (1 row/tx)", spread(rates.store, perSecond));
  report("append / raw", ratio(rates.store, rates.raw), "≥ 0.50×");
} finally {
  await Deno.remove(dir, { recursive: true });
}
