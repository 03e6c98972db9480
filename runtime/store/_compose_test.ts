import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import postgres from "postgres";
import { systemClock } from "../core/clock.ts";
import { composeOps, LAZY_OPS, type LazyParts } from "./_compose.ts";
import { SqliteDb } from "./sqlite/_db.ts";
import * as sqliteParts from "./sqlite/_parts.ts";
import { openSqliteStore } from "./sqlite/sqlite_store.ts";
import { PgDb, TYPES } from "./postgres/_db.ts";
import * as pgParts from "./postgres/_parts.ts";

type Backend = { eager: typeof sqliteParts.eager; lazy: typeof sqliteParts.lazy } | {
  eager: typeof pgParts.eager;
  lazy: typeof pgParts.lazy;
};

/**
 * The names of each part's operations as its backend builds them: a lazy part's must be those LAZY_OPS
 * lists for it (a stand-in is made for each listed name only), and no two parts may share one (the store
 * would keep only one of them, silently).
 */
async function checkParts<D>(db: D, { eager, lazy }: Backend): Promise<void> {
  const owner = new Map<string, string>();
  const add = (part: string, ops: object) => {
    for (const [name, op] of Object.entries(ops)) {
      assert.equal(typeof op, "function", `${part}.${name} is not an operation`);
      assert.ok(!owner.has(name), `${name} is an operation of ${owner.get(name)} and of ${part}`);
      owner.set(name, part);
    }
  };
  for (const [part, make] of Object.entries(eager)) add(part, (make as (db: D) => object)(db));
  assert.deepEqual(Object.keys(lazy).sort(), Object.keys(LAZY_OPS).sort());
  for (const [part, load] of Object.entries(lazy)) {
    const ops = ((await load()) as (db: D) => object)(db);
    assert.deepEqual(
      Object.keys(ops).sort(),
      Object.keys(LAZY_OPS[part as keyof typeof LAZY_OPS]).sort(),
      `the operations of ${part} and LAZY_OPS.${part} differ`,
    );
    add(part, ops);
  }
}

Deno.test("store parts: each SQLite part loaded on use builds exactly the operations LAZY_OPS lists for it", async () => {
  const db = new SqliteDb(new DatabaseSync(":memory:"), { clock: systemClock, host: "test" });
  try {
    await checkParts(db, sqliteParts);
  } finally {
    db.close();
  }
});

Deno.test("store parts: each PostgreSQL part loaded on use builds exactly the operations LAZY_OPS lists for it", async () => {
  // The client connects on its first query; building the parts runs none.
  const sql = postgres("postgres://hermes@127.0.0.1:1/unused", { max: 1, types: TYPES });
  try {
    const db = new PgDb(sql, {
      clock: systemClock,
      host: "test",
      commitCheck: { policy: { budgetMs: 0, clock: systemClock }, where: "test" },
    });
    await checkParts(db, pgParts);
  } finally {
    await sql.end({ timeout: 1 });
  }
});

Deno.test("store parts: the check fails for a lazy part that builds an operation LAZY_OPS does not list", async () => {
  const db = new SqliteDb(new DatabaseSync(":memory:"), { clock: systemClock, host: "test" });
  try {
    const lazy = {
      ...sqliteParts.lazy,
      runCountOps: async () => {
        const runCountOps = await sqliteParts.lazy.runCountOps();
        return (db: SqliteDb) => ({ ...runCountOps(db), runTotals: () => Promise.resolve(0) });
      },
    };
    await assert.rejects(
      () => checkParts(db, { eager: sqliteParts.eager, lazy }),
      /the operations of runCountOps and LAZY_OPS\.runCountOps differ/,
    );
    // …and for two parts sharing an operation's name.
    const shared = { ...sqliteParts.eager, copyOfKv: sqliteParts.eager.stateOps };
    await assert.rejects(
      () => checkParts(db, { eager: shared, lazy: sqliteParts.lazy }),
      /getState is an operation of stateOps and of copyOfKv/,
    );
  } finally {
    db.close();
  }
});

Deno.test("store parts: a lazy part's operations work before and after it loads; first calls waiting for its import run in call order", async () => {
  const store = openSqliteStore(":memory:");
  try {
    const session = await store.createSession({ job: "j" });
    // Two first calls of one part at once: both wait for the same import, then run in call order.
    const [first, second] = await Promise.all([
      store.acquireLease({
        sessionId: session.id,
        holder: { host: "h", pid: 1, started: "s", nonce: "n" },
        now: 0,
        ttlMs: 1000,
      }),
      store.readLease(session.id),
    ]);
    assert.equal(first.acquired, true);
    assert.ok(second);
    // Loaded: the stand-in calls the operation at once.
    assert.ok(await store.readLease(session.id));
    assert.deepEqual(await store.runCounts(), await store.runCounts());
  } finally {
    await store.close();
  }
});

Deno.test("store parts: composeOps builds a stand-in for every listed operation of every lazy part", () => {
  let loads = 0;
  const lazy = Object.fromEntries(
    Object.keys(LAZY_OPS).map((name) => [name, () => (loads++, Promise.reject(new Error("not loaded")))]),
  ) as unknown as LazyParts<undefined>;
  const ops = composeOps(undefined, {}, lazy) as unknown as Record<string, unknown>;
  for (const part of Object.values(LAZY_OPS)) {
    for (const name of Object.keys(part)) assert.equal(typeof ops[name], "function", name);
  }
  assert.equal(loads, 0);
});
